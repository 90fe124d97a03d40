"""Gradient specs for the public dtype conversions (``convert``, ``cast``, ``asarray``
inside a differentiated function), all lowered to ``convert_element_type``."""

import tenferro as tf

from . import OpSpec

SPECS = [
    OpSpec(
        "conv_convert_f64_to_c128",
        lambda x: tf.convert(x, tf.complex128) * (1 + 2j),
        [((3,),), ((),), ((0,),)],
        covers=("convert_element_type",),
        dtypes=("float64",),
    ),
    OpSpec(
        "conv_cast_c128_to_f64",
        lambda x: tf.cast(x, tf.float64) * tf.cast(x, tf.float64),
        [((3,),), ((2, 2),)],
        covers=("convert_element_type",),
        dtypes=("complex128",),
    ),
    OpSpec(
        "conv_cast_f64_to_f32_roundtrip",
        lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64) * 0 + x * x,
        [((3,),)],
        covers=("convert_element_type",),
        dtypes=("float64",),
    ),
    OpSpec(
        "conv_asarray_traced",
        lambda x: tf.asarray(x) * tf.asarray(x, dtype=tf.complex128),
        [((3,),)],
        covers=("convert_element_type",),
        dtypes=("float64",),
    ),
]
