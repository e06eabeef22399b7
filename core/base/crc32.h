/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): the checksum of
 * zlib, PNG and gzip, so files can be checked with standard tools. */
#ifndef MXC_CORE_BASE_CRC32_H_
#define MXC_CORE_BASE_CRC32_H_

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: start with crc = 0. crc32("123456789") = 0xCBF43926. */
uint32_t mxc__crc32(uint32_t crc, const void *data, size_t n);

#endif /* MXC_CORE_BASE_CRC32_H_ */
