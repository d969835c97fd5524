// A valid ByteStorage envelope whose payload is a bin32 of (declared - 5)
// zero bytes, built without ever holding the payload: a hand-made LZ4 block
// (6 literals, one long match at offset 1, 5 closing literals) and xxh3
// streamed over zero chunks. 500 MB come out of about 1.96 MB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <xxhash.h>

namespace hostile {

inline void put_be(std::string &out, uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) out.push_back(char(uint8_t(v >> (8 * i))));
}

inline std::string envelope_declaring(uint64_t declared) {
    const uint64_t body = declared - 5;
    std::string head = "\xc6";
    put_be(head, body, 4);
    head.push_back('\0');
    std::string block;
    block.push_back(char(0x6f));  // 6 literals, match length 4 + 15 + extension bytes
    block += head;
    block.push_back(1);  // offset 1: repeat the last zero
    block.push_back(0);
    for (uint64_t rest = declared - 6 - 5 - 19;; rest -= 255) {
        if (rest < 255) {
            block.push_back(char(rest));
            break;
        }
        block.push_back(char(255));
    }
    block.push_back(char(0x50));  // the closing 5 literals
    block.append(5, '\0');

    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, head.data(), 5);
    const std::vector<char> zeros(1 << 20, 0);
    for (uint64_t left = body; left > 0;) {
        const size_t n = size_t(left < zeros.size() ? left : zeros.size());
        XXH3_64bits_update(st, zeros.data(), n);
        left -= n;
    }
    const uint64_t sum = XXH3_64bits_digest(st);
    XXH3_freeState(st);

    std::string env = "\x94\xc6";  // fixarray(4), bin32
    put_be(env, block.size(), 4);
    env += block;
    env.push_back(char(0x98));  // the checksum: array(8) of uint
    for (int i = 7; i >= 0; --i) {
        const uint8_t b = uint8_t(sum >> (8 * i));
        if (b >= 0x80) env.push_back(char(0xcc));
        env.push_back(char(b));
    }
    env.push_back(char(0xce));  // original_size as uint32
    put_be(env, declared, 4);
    env += "\xa7msgpack";
    return env;
}

}  // namespace hostile
