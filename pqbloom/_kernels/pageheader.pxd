# The parsed fields of a page header, shared with the compiled page loop (pqbloom/_kernels/chunkloop.pyx).

from libc.stdint cimport int64_t, uint8_t

cdef enum:
    # slots of HeaderFields: PageHeader 1-4, DataPageHeader 1-4, DictionaryPageHeader 1-2,
    # DataPageHeaderV2 1-7
    S_TYPE = 0
    S_USIZE = 1
    S_CSIZE = 2
    S_CRC = 3
    S_DP = 4  # DataPageHeader: num_values, encoding, definition / repetition level encodings
    S_DICT = 8  # DictionaryPageHeader: num_values, encoding
    S_V2 = 10  # DataPageHeaderV2: num_values, num_nulls, num_rows, encoding, dl, rl, is_compressed
    N_SLOTS = 17


cdef struct HeaderFields:
    int64_t value[N_SLOTS]
    bint has[N_SLOTS]
    bint has_dp
    bint has_dict
    bint has_v2


cdef int parse_fields(const uint8_t *p, int64_t pos, int64_t end, HeaderFields *res,
                      int64_t *end_pos) noexcept nogil
