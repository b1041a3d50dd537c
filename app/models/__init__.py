"""Qt adapters over engine data: the session object panes listen to, and thin item models."""
