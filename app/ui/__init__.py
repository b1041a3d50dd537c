"""What the whole Qt layer shares and no pane owns: colours and fonts, icons, the per-frame
throttle, the error reporter and the export writers."""
