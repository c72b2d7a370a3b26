package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// dtypeOf maps the trace's "Input type" names to gpucalc's data types; ok is
// false for types gpucalc has no size for (int64 indices, complex).
func dtypeOf(s string) (devices.DType, bool) {
	switch s {
	case "c10::BFloat16":
		return devices.BF16, true
	case "c10::Half":
		return devices.FP16, true
	case "float":
		return devices.FP32, true
	case "double":
		return devices.FP64, true
	case "c10::Float8_e4m3fn", "c10::Float8_e4m3fnuz":
		return devices.FP8E4M3, true
	case "c10::Float8_e5m2", "c10::Float8_e5m2fnuz":
		return devices.FP8E5M2, true
	case "int":
		return devices.INT32, true
	case "signed char", "unsigned char", "bool":
		return devices.INT8, true
	}
	return "", false
}

// scalarTypes are c10::ScalarType codes as a cast's Concrete Inputs give
// them (c10/core/ScalarType.h).
var scalarTypes = map[string]devices.DType{
	"0": devices.INT8, "1": devices.INT8, "3": devices.INT32, "5": devices.FP16, "6": devices.FP32,
	"7": devices.FP64, "11": devices.INT8, "15": devices.BF16, "23": devices.FP8E5M2, "24": devices.FP8E4M3,
}

// precision orders floating types from narrowest, to find the type an op
// computes in under autocast (its inputs are fp32, its kernels bf16).
var precision = map[devices.DType]int{
	devices.FP8E4M3: 1, devices.FP8E5M2: 1, devices.FP16: 2, devices.BF16: 2, devices.FP32: 3, devices.FP64: 4,
}

// narrower returns the narrower floating type of a and b ("" counts as
// none).
func narrower(a, b devices.DType) devices.DType {
	pa, pb := precision[a], precision[b]
	switch {
	case pb == 0:
		return a
	case pa == 0 || pb < pa:
		return b
	}
	return a
}

// call is one op's arguments, read for modelling.
type call struct {
	op *Op
	// compute is the narrowest floating type among the op's and its
	// descendants' tensors: what autocast computes matrix products in.
	compute devices.DType
}

// tensor returns argument i's dims, with ok false when it is absent, a
// scalar or not a tensor.
func (c call) tensor(i int) ([]int64, bool) {
	if i >= len(c.op.Inputs) || len(c.op.Inputs[i].Dims) == 0 {
		return nil, false
	}
	if i < len(c.op.Types) && (c.op.Types[i] == "Scalar" || c.op.Types[i] == "") {
		return nil, false
	}
	return c.op.Inputs[i].Dims, true
}

func (c call) typ(i int) (devices.DType, bool) {
	if i >= len(c.op.Types) {
		return "", false
	}
	return dtypeOf(c.op.Types[i])
}

func (c call) concrete(i int) string {
	if i >= len(c.op.Concrete) {
		return ""
	}
	return c.op.Concrete[i]
}

// ints reads a Concrete Input list such as "[2, 2]".
func (c call) ints(i int) ([]int64, bool) {
	s := strings.TrimSpace(c.concrete(i))
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, false
	}
	var out []int64
	for _, f := range strings.Split(s[1:len(s)-1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func numel(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

// unmodelled is the reason an op has no model.
type unmodelled string

func (u unmodelled) Error() string { return string(u) }

func noModel(format string, a ...any) error { return unmodelled(fmt.Sprintf(format, a...)) }

// model returns what one call of the op costs, as one or more gpucalc ops
// (a convolution's backward is two convolutions: data and weight
// gradients), or an unmodelled error saying why not.
// The models sit by op family: aten_matmul.go (GEMMs, attention),
// aten_conv.go, aten_norm.go (norms, softmax), aten_reduce.go (reductions,
// pooling), aten_elementwise.go and aten_copy.go (copies, casts, lookups).
func model(c call) ([]ops.Op, error) {
	name := c.op.Name
	switch name {
	case "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear":
		return gemm(c)
	case "aten::conv2d", "aten::convolution", "aten::_convolution", "aten::cudnn_convolution":
		return conv(c, 3, 4, 5, 8)
	case "aten::convolution_backward":
		return convBackward(c)
	case "aten::embedding":
		return embedding(c)
	case "aten::layer_norm", "aten::native_layer_norm", "aten::rms_norm", "aten::_fused_rms_norm":
		return norm(c)
	case "aten::native_layer_norm_backward", "aten::_softmax_backward_data", "aten::_log_softmax_backward_data":
		return normBackward(c)
	case "aten::batch_norm", "aten::native_batch_norm", "aten::_batch_norm_impl_index", "aten::cudnn_batch_norm",
		"aten::native_batch_norm_backward", "aten::cudnn_batch_norm_backward":
		return batchNorm(c)
	case "aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax":
		return softmax(c)
	case "aten::mean", "aten::sum", "aten::amax", "aten::adaptive_avg_pool2d":
		return reduction(c)
	case "aten::max_pool2d", "aten::max_pool2d_with_indices":
		return maxPool(c)
	case "aten::relu", "aten::relu_", "aten::silu", "aten::silu_", "aten::gelu", "aten::gelu_":
		return activation(c)
	case "aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_", "aten::div", "aten::div_",
		"aten::threshold_backward", "aten::maximum", "aten::minimum", "aten::where",
		"aten::gelu_backward", "aten::silu_backward", "aten::sigmoid_backward", "aten::tanh_backward",
		"aten::addcmul", "aten::addcmul_", "aten::addcdiv", "aten::addcdiv_", "aten::lerp", "aten::lerp_",
		"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge":
		return elementwise(c)
	case "aten::neg", "aten::neg_", "aten::rsqrt", "aten::rsqrt_", "aten::sqrt", "aten::pow", "aten::exp", "aten::log",
		"aten::sin", "aten::cos", "aten::tanh", "aten::sigmoid", "aten::abs", "aten::reciprocal", "aten::clamp", "aten::clamp_",
		"aten::clamp_min", "aten::clamp_min_", "aten::fill_", "aten::zero_", "aten::dropout":
		return unary(c)
	case "aten::to", "aten::_to_copy", "aten::copy_", "aten::clone", "aten::contiguous", "aten::reshape",
		"aten::cat", "aten::index_copy_", "aten::index_select", "aten::repeat_interleave", "aten::expand_as":
		return copyOp(c)
	}
	if a, ok := attention[name]; ok {
		return attentionOp(c, a)
	}
	if strings.HasPrefix(name, "aten::_foreach_") {
		return foreach(c)
	}
	return nil, noModel("no model for %s", strings.TrimPrefix(name, "aten::"))
}
