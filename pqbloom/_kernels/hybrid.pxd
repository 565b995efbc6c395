# The hybrid decoder's loops shared with the compiled page loop (pqbloom/_kernels/chunkloop.pyx),
# as hybrid.pyx defines them (same bounds checks, same error codes).

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

cdef int64_t decode_indices(const uint8_t *src, int64_t end, int bw, int64_t count, int32_t *out,
                            int64_t *info) noexcept nogil
cdef int64_t level_block_int8(const uint8_t *src, int64_t end, int64_t pos, int64_t stated, int bw, int64_t count,
                              int8_t *out, int64_t *info, int64_t *next_pos) noexcept nogil
cdef int64_t gather_dense(const int32_t *idx, int64_t count, const uint8_t *dic, int64_t dict_len,
                          int64_t width, uint8_t *out) noexcept nogil
cdef int64_t gather_present(const int32_t *idx, int64_t count, const uint8_t *dic, int64_t dict_len,
                            int64_t width, const uint8_t *present, int64_t rows, uint8_t *out) noexcept nogil
