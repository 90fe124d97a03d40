"""tensor4all.networks."""
