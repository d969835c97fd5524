// An incremental check of the RESP2 bytes a Redis server sends, run on every
// byte BEFORE hiredis's reader sees it. hiredis 0.14 has no limits of its
// own: it buffers a bulk string of any declared size, reads a line until it
// ends (never, if the server says so), and callocs one pointer per declared
// array element (`*2147483647` cost seconds of CPU and 16 GiB of address
// space). The guard follows the replies' structure with a few integers of
// state and refuses, as soon as the offending header or byte arrives:
//   - a bulk string whose declared length would take the reply past
//     max_reply_bytes (Refusal::TooBig);
//   - a reply whose bytes in total pass max_reply_bytes (TooBig);
//   - an array the command cannot answer: deeper than its shape, or
//     declaring more elements than the shape allows at that depth (Malformed);
//   - a status, error or integer line longer than kMaxLine, a length header
//     longer than kMaxHeader, an unknown type byte, a bad length or
//     integer (not a decimal int64), a bulk
//     string not followed by CRLF (Malformed);
//   - any byte after the last reply expected (Malformed), unless a stream
//     shape stands for every further reply.
// Each expected reply is queued with expect() (one per command written);
// feed() then takes the bytes in any chunking. After a refusal the guard is
// dead until reset(): the connection it watched must be discarded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cachekit::l2 {

// What one command's reply may look like: arrays nested at most `depth`
// deep, with at most max_elements[d] elements at depth d (0 = top level).
struct ReplyShape {
    static constexpr int kMaxDepth = 4;  // CLUSTER SHARDS: shards > shard > nodes > node
    uint8_t depth = 0;
    uint32_t max_elements[kMaxDepth] = {0, 0, 0, 0};

    static ReplyShape scalar() { return {}; }                  // GET, SET, PTTL, PING...
    static ReplyShape array(uint32_t n) { return {1, {n, 0}}; }  // MGET of n keys
    static ReplyShape nested(uint32_t n, uint32_t inner) { return {2, {n, inner}}; }  // SCAN: [cursor, [keys]]
    static ReplyShape tree(uint32_t n) { return {kMaxDepth, {n, n, n, n}}; }  // CLUSTER SHARDS / SLOTS
};

class RespGuard {
public:
    static constexpr size_t kMaxLine = 8 * 1024;  // a status, error or integer line
    static constexpr size_t kMaxHeader = 24;      // "$<len>" / "*<count>" lines: 20 digits and a sign

    enum class Refusal { None, TooBig, Malformed };

    explicit RespGuard(uint64_t max_reply_bytes) : limit_(max_reply_bytes) {}

    uint64_t limit() const { return limit_; }
    void expect(ReplyShape shape);
    // A connection whose replies are not one per command (a subscriber's
    // pushes): once the queue is empty, every further reply must fit `shape`.
    void expect_stream(ReplyShape shape) { stream_ = shape; has_stream_ = true; }
    // Check the next `n` bytes; false when refused (see refusal() and why()).
    bool feed(const char *data, size_t n);
    Refusal refusal() const { return refusal_; }
    const std::string &why() const { return why_; }
    // Replies expected whose last byte has not arrived yet.
    size_t pending() const { return shapes_.size() - head_; }
    // Forget everything (a fresh connection).
    void reset();

private:
    enum class State : uint8_t { Type, Line, LineLf, Bulk, BulkCr, BulkLf };

    bool refuse(Refusal kind, std::string why);
    std::string over_limit() const;
    bool start(char type);
    bool end_line();
    bool value_done();  // one scalar finished: count it against its array, maybe end the reply
    bool header_number(int64_t *out);

    uint64_t limit_;
    std::vector<ReplyShape> shapes_;
    ReplyShape stream_;
    bool has_stream_ = false;
    size_t head_ = 0;  // shapes_[head_] is the reply being read
    State state_ = State::Type;
    char type_ = 0;
    size_t line_len_ = 0;
    char header_[kMaxHeader];
    uint64_t bulk_left_ = 0;
    uint64_t reply_bytes_ = 0;
    int depth_ = 0;                                 // open arrays
    uint64_t left_[ReplyShape::kMaxDepth + 1] = {};  // elements still to come per open array
    Refusal refusal_ = Refusal::None;
    std::string why_;
};

}  // namespace cachekit::l2
