// RESP bytes in, hiredis replies out: hiredis's own reader (the one
// redisGetReply runs over what the socket delivered), for the reply-mapping
// unit test and the fuzz target.
//
// One guard: on an array header hiredis 0.14 callocs 8 bytes per declared
// element before any element arrives, so "*2147483647\r\n" alone reserves
// 16 GiB. The reader here refuses a header declaring more than
// `max_array_elements` (the fuzz target passes a third of its input: the
// shortest element, "+\r\n", is 3 bytes, so a longer array cannot complete)
// the way hiredis handles a failed allocation: the reader fails with
// "Out of memory" and frees what it had built.
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <new>
#include <string_view>

#include "l2/redis/redis_replies.hpp"

namespace resp {

using cachekit::l2::redis_replies::Reply;

class Reader {
public:
    explicit Reader(size_t max_array_elements) : max_elements_(max_array_elements), reader_(redisReaderCreate()) {
        if (reader_ == nullptr) throw std::bad_alloc();
        functions_ = *reader_->fn;  // hiredis's default reply constructors
        create_array_ = functions_.createArray;
        functions_.createArray = &Reader::create_array;
        reader_->fn = &functions_;
        reader_->privdata = this;  // handed to every read task
    }
    ~Reader() { redisReaderFree(reader_); }
    Reader(const Reader &) = delete;
    Reader &operator=(const Reader &) = delete;

    bool feed(std::string_view bytes) { return redisReaderFeed(reader_, bytes.data(), bytes.size()) == REDIS_OK; }

    // True with the next complete reply in `out` (null when the bytes fed so
    // far end inside a reply); false when the stream is broken (error()).
    bool next(Reply &out) {
        void *raw = nullptr;
        const int rc = redisReaderGetReply(reader_, &raw);
        out.reset(static_cast<redisReply *>(raw));
        return rc == REDIS_OK;
    }

    const char *error() const { return reader_->errstr; }

private:
    static void *create_array(const redisReadTask *task, int elements) {
        auto *self = static_cast<Reader *>(task->privdata);
        if (elements > 0 && static_cast<size_t>(elements) > self->max_elements_) return nullptr;
        return self->create_array_(task, elements);
    }

    size_t max_elements_;
    redisReader *reader_;
    redisReplyObjectFunctions functions_{};
    void *(*create_array_)(const redisReadTask *, int) = nullptr;
};

}  // namespace resp
