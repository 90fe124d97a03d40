"""tensor4all.tools."""
