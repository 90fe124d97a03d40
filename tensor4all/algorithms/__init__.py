"""tensor4all.algorithms."""
