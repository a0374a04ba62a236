"""tabbar-gtk: a native GTK 4 front end for tabbard (docs/GTK.md)."""
