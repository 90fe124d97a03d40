"""tensor4all.sites."""
