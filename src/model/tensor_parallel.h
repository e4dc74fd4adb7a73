// Tensor parallelism of the llama decoder (Megatron-LM's split): over tp ranks, the
// q/k/v and gate/up projections are column-parallel (each rank holds a slice of their
// output features: whole attention heads, whole KV heads, a slice of the feed-forward
// width), the attention output and down projections row-parallel (each rank holds the
// matching slice of their input features; the partial outputs are summed over ranks,
// one all-reduce per block half); the embeddings and the output layer are split by
// vocabulary (each rank embeds the ids of its slice, an all-reduce adds the rows;
// each rank computes the logits of its slice, an all-gather joins them). Norms are
// replicated. The table of arch.h says which tensor takes which split (TpSplit).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "model/arch.h"
#include "wick/quant.h"
#include "wick/tensor.h"

namespace wick::model {

// Throws InvalidArgument naming tp and the hyperparameter unless every split lands on
// a whole head, a whole KV head and equal parts of the feed-forward width and the
// vocabulary (n_head, n_head_kv, n_ff, n_vocab multiples of tp), and unless the
// row-parallel matrices' column slices are whole quantization blocks (each tensor's
// type in the plan). tp must be at least 1.
void check_tensor_parallel(const ModelPlan& plan, size_t tp);

// The hyperparameters of one rank: heads, KV heads, feed-forward width and vocabulary
// divided by tp (check_tensor_parallel first).
HParams rank_hparams(const HParams& hp, size_t tp);

// The tp parts of a matrix (rows, cols) by `how`, on w's device: Out gives rank r the
// rows [r rows/tp, (r+1) rows/tp), In the columns [r cols/tp, (r+1) cols/tp) of every row,
// None the whole matrix. A part's values are the matrix's, bit for bit (whole rows and
// whole blocks are copied). Throws InvalidArgument naming `name`, its shape, type and tp
// when the dimension is not a multiple of tp, or when an In part is not whole blocks.
std::vector<QTensor> split_matrix(const QTensor& w, TpSplit how, size_t tp, std::string_view name);

// The tp parts of a vector (n) by `how`: Out gives rank r [r n/tp, (r+1) n/tp), None the
// whole vector; In is not a split of a vector (InvalidArgument, as is n % tp != 0).
std::vector<Tensor> split_vector(const Tensor& v, TpSplit how, size_t tp, std::string_view name);

}  // namespace wick::model
