"""tensor4all.operators."""
