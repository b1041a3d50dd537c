"""The inspector window's panes, one module per pane (and :mod:`.pane`, the frame and table they share).

Each pane listens to the one :class:`~callscope.models.session.InspectorSession` and
draws what it shows at the cursor; none computes an analysis or knows where it came from.
"""
