"""The inspector window's panes, one module per pane, plus the dialogs and small shared helpers."""
