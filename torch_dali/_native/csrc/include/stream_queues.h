// Keeping the loader's CUDA streams out of the training's hardware queue.
//
// The driver maps every stream onto one of CUDA_DEVICE_MAX_CONNECTIONS hardware work queues (8
// unless set), in the order streams are made. Work queued in one queue runs in order across all
// its streams, so a loader stream whose head waits (for the JPEG engines, a host function, another
// stream's event) or runs dependent kernels holds back the training's kernels when both streams
// share a queue. Which queue a stream got cannot be asked; it can be observed: block a stream's
// head on the host and see whether the other stream's next command still completes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace torch_dali {

// true when work on `a` holds back work on `b`: a's head is blocked by a host function for up to
// `wait_us` microseconds while an event is recorded on b (b's earlier work is waited for first,
// so only the shared queue can keep the event from passing).
bool streams_share_queue(cudaStream_t a, cudaStream_t b, int64_t wait_us);

// Streams whose queues new loader streams keep out of (the consumer's stream, the default stream).
void avoid_queue_of(cudaStream_t s);
std::vector<cudaStream_t> avoided_streams();

// Makes a non-blocking stream of `priority` that shares no hardware queue with an avoided stream
// (up to 8 tries: each try lands on the driver's next queue). The streams that did share are
// destroyed after the one kept was made. With nothing to avoid (TORCH_DALI_QUEUE_PROBE=0 registers
// nothing), one plain stream.
cudaError_t new_stream_avoiding(cudaStream_t* s, int priority);

}  // namespace torch_dali
