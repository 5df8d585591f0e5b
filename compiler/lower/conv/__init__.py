"""The int8 and float convolution kernels, one module per implementation family (as TFLM's kernels/
folders and the strategy of ``tinyfuse.strategy.conv`` list them):

``ref``  portable C (isl loop nests), any conv; ``blocks`` / ``dsp``  the SMLAD blocks of 2 pixels x
2-4 channels (arm_dsp), the im2col columns (``im2col_rows``: row-wise gathers); ``mve``  Helium (the
quad kernel with the vector requantization, the 2 x 2 blocks); ``fpu``  float VFMA blocks (arm_fpu);
``sparse`` / ``sparse_dsp``  without the zero weights (lists; SMLAD pairs); ``depthwise_dsp`` /
``depthwise_mve`` / ``depthwise_rows`` / ``depthwise_common``  depthwise quads, Helium lanes, the
in-place three-row ring; ``inplace``  the portable in-place kernels (dw_plane, pixel_buffer);
``chain`` / ``chain_mve`` / ``chain_pool``  poly-fused chains (line buffers), their DSP and Helium stages, the
final whole-image pooling stage;
``skip_zero``  --skip-zero-activations; ``implementations``  the strategy's names -> these lowerings.
"""
