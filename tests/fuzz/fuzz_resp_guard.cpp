// The RESP guard (src/l2/redis/resp_guard.hpp). Input: one byte choosing the
// expected replies' shapes and the limit, one byte seeding the chunking,
// then the server's bytes. Properties:
//   - the verdict and its reason do not depend on how the bytes are chunked;
//   - a refusal is TooBig or Malformed with a reason, and final;
//   - bytes the guard let through whole (no reply pending) parse in
//     hiredis's reader into exactly the replies expected, none of them
//     larger than the limit or shaped beyond what was expected.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../l2/resp_reader.hpp"
#include "fuzz_common.hpp"
#include "l2/redis/resp_guard.hpp"

namespace {

using cachekit::l2::ReplyShape;
using cachekit::l2::RespGuard;

struct Plan {
    std::vector<ReplyShape> shapes;
    uint64_t limit;
};

Plan plan_of(uint8_t b) {
    Plan p;
    const ReplyShape options[] = {ReplyShape::scalar(), ReplyShape::array(3), ReplyShape::nested(2, 5),
                                  ReplyShape::array(0)};
    p.shapes.push_back(options[b & 3]);
    if (b & 4) p.shapes.push_back(options[(b >> 3) & 3]);
    p.limit = (b & 0x20) ? 64 : 4096;
    return p;
}

// Bytes a reply tree holds, and whether its arrays fit the shape.
uint64_t size_of(const redisReply &r) {
    uint64_t n = r.len;
    if (r.type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r.elements; ++i) n += size_of(*r.element[i]);
    return n;
}

bool fits(const redisReply &r, const ReplyShape &s, int depth) {
    if (r.type != REDIS_REPLY_ARRAY) return true;
    if (depth >= s.depth || r.elements > s.max_elements[depth]) return false;
    for (size_t i = 0; i < r.elements; ++i)
        if (!fits(*r.element[i], s, depth + 1)) return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const Plan plan = plan_of(data[0]);
    uint8_t seed = data[1];
    const char *bytes = reinterpret_cast<const char *>(data + 2);
    const size_t n = size - 2;

    RespGuard whole(plan.limit), chunked(plan.limit);
    for (const ReplyShape &s : plan.shapes) {
        whole.expect(s);
        chunked.expect(s);
    }
    const bool ok = whole.feed(bytes, n);
    bool ok2 = true;
    for (size_t i = 0; i < n && ok2;) {
        seed = uint8_t(seed * 73 + 41);
        const size_t take = std::min<size_t>(n - i, 1 + seed % 7);
        ok2 = chunked.feed(bytes + i, take);
        i += take;
    }
    FUZZ_REQUIRE(ok == ok2);
    FUZZ_REQUIRE(whole.why() == chunked.why());
    if (!ok) {
        FUZZ_REQUIRE(whole.refusal() != RespGuard::Refusal::None);
        FUZZ_REQUIRE(!whole.why().empty());
        FUZZ_REQUIRE(!whole.feed("+OK\r\n", 5));
        return 0;
    }
    if (whole.pending() != 0) return 0;

    resp::Reader reader(1 << 20);
    FUZZ_REQUIRE(reader.feed(std::string_view(bytes, n)));
    for (const ReplyShape &s : plan.shapes) {
        resp::Reply reply;
        FUZZ_REQUIRE(reader.next(reply));
        FUZZ_REQUIRE(reply != nullptr);
        FUZZ_REQUIRE(size_of(*reply) <= plan.limit);
        FUZZ_REQUIRE(fits(*reply, s, 0));
    }
    resp::Reply extra;
    FUZZ_REQUIRE(reader.next(extra));
    FUZZ_REQUIRE(extra == nullptr);
    return 0;
}
