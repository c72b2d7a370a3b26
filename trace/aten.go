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

// attention argument positions: where is_causal sits, and whether q, k, v
// are (B, S, H, D) rather than (B, H, S, D).
var attention = map[string]struct {
	causal int
	bshd   bool
}{
	"aten::scaled_dot_product_attention":            {5, false},
	"aten::_scaled_dot_product_flash_attention":     {4, false},
	"aten::_scaled_dot_product_efficient_attention": {6, false},
	"aten::_scaled_dot_product_cudnn_attention":     {6, false},
	"aten::_flash_attention_forward":                {6, true},
}

// model returns what one call of the op costs, as one or more gpucalc ops
// (a convolution's backward is two convolutions: data and weight
// gradients), or an unmodelled error saying why not.
func model(c call) ([]ops.Op, error) {
	name := c.op.Name
	dt, _ := c.typ(0)
	switch name {
	case "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear":
		return gemm(c)
	case "aten::conv2d", "aten::convolution", "aten::_convolution", "aten::cudnn_convolution":
		return conv(c, 3, 4, 5, 8)
	case "aten::convolution_backward":
		if len(c.op.Inputs) < 3 || len(c.op.Types) < 3 || len(c.op.Concrete) < 11 {
			return nil, noModel("arguments not recorded")
		}
		// grad_output, input, weight, bias_sizes, stride, padding,
		// dilation, transposed, output_padding, groups, output_mask.
		fwd, err := conv(call{op: &Op{Name: name, Inputs: c.op.Inputs[1:], Types: c.op.Types[1:], Concrete: c.op.Concrete[1:]}, compute: c.compute}, 3, 4, 5, 8)
		if err != nil {
			return nil, err
		}
		// Each gradient (input, weight) is one convolution of the forward's
		// FLOPs and tensor sizes.
		var out []ops.Op
		mask := c.concrete(10)
		for _, m := range strings.Split(strings.Trim(mask, "[]"), ",")[:2] {
			if strings.TrimSpace(m) == "True" {
				out = append(out, fwd[0])
			}
		}
		if len(out) == 0 {
			return nil, noModel("only the bias gradient")
		}
		return out, nil
	case "aten::embedding":
		w, ok1 := c.tensor(0)
		idx, ok2 := c.tensor(1)
		if !ok1 || !ok2 || len(w) != 2 {
			return nil, noModel("embedding without a 2-D table and indices")
		}
		return []ops.Op{{Kind: ops.Embedding, DType: dt, Rows: numel(idx), Cols: w[1]}}, nil
	case "aten::layer_norm", "aten::native_layer_norm", "aten::rms_norm", "aten::_fused_rms_norm":
		x, ok := c.tensor(0)
		norm, ok2 := c.ints(1)
		if !ok || !ok2 || len(norm) == 0 {
			return nil, noModel("normalised shape not recorded")
		}
		kind := ops.LayerNorm
		if strings.Contains(name, "rms") {
			kind = ops.RMSNorm
		}
		cols := numel(norm)
		return []ops.Op{{Kind: kind, DType: dt, Rows: numel(x) / cols, Cols: cols}}, nil
	case "aten::native_layer_norm_backward", "aten::_softmax_backward_data", "aten::_log_softmax_backward_data":
		// Read the gradient and the saved input or output, write the
		// input's gradient: three tensors, as an add moves.
		x, ok := c.tensor(0)
		if !ok {
			return nil, noModel("input shape not recorded")
		}
		return []ops.Op{{Kind: ops.Add, DType: dt, Elems: numel(x)}}, nil
	case "aten::batch_norm", "aten::native_batch_norm", "aten::_batch_norm_impl_index", "aten::cudnn_batch_norm",
		"aten::native_batch_norm_backward", "aten::cudnn_batch_norm_backward":
		x, ok := c.tensor(0)
		if !ok || len(x) < 2 {
			return nil, noModel("input shape not recorded")
		}
		n := numel(x)
		if strings.HasSuffix(name, "_backward") {
			// Reads the gradient and the input, writes the input's
			// gradient: three tensors, as an add moves.
			return []ops.Op{{Kind: ops.Add, DType: dt, Elems: n}}, nil
		}
		return []ops.Op{{Kind: ops.BatchNorm, DType: dt, Rows: x[1], Cols: n / x[1]}}, nil
	case "aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax":
		x, ok := c.tensor(0)
		d, err := strconv.Atoi(c.concrete(1))
		if !ok || err != nil {
			return nil, noModel("softmax dimension not recorded")
		}
		if d < 0 {
			d += len(x)
		}
		if d < 0 || d >= len(x) {
			return nil, noModel("softmax dimension %d outside the input's %d", d, len(x))
		}
		return []ops.Op{{Kind: ops.Softmax, DType: dt, Rows: numel(x) / x[d], Cols: x[d]}}, nil
	case "aten::mean", "aten::sum", "aten::amax", "aten::adaptive_avg_pool2d":
		x, ok := c.tensor(0)
		if !ok {
			return nil, noModel("input shape not recorded")
		}
		dims, ok := c.ints(1)
		if name == "aten::adaptive_avg_pool2d" {
			if !ok || numel(dims) != 1 || len(x) != 4 {
				return nil, noModel("pooling to more than one value per channel")
			}
			dims = []int64{-1, -2}
		}
		cols := int64(1)
		for _, d := range dims {
			if d < 0 {
				d += int64(len(x))
			}
			if d >= 0 && d < int64(len(x)) {
				cols *= x[d]
			}
		}
		if !ok || len(dims) == 0 {
			cols = numel(x) // a full reduction
		}
		return []ops.Op{{Kind: ops.Reduce, DType: dt, Rows: numel(x) / cols, Cols: cols}}, nil
	case "aten::max_pool2d", "aten::max_pool2d_with_indices":
		x, ok := c.tensor(0)
		k, ok1 := c.ints(1)
		s, ok2 := c.ints(2)
		p, ok3 := c.ints(3)
		if !ok || len(x) != 4 || !ok1 || !ok2 || !ok3 || len(k) == 0 || len(p) == 0 {
			return nil, noModel("pooling window not recorded")
		}
		if len(s) == 0 {
			s = k
		}
		ph, pw := (x[2]+2*p[0]-k[0])/s[0]+1, (x[3]+2*p[len(p)-1]-k[len(k)-1])/s[len(s)-1]+1
		outs := x[0] * x[1] * ph * pw
		// Each output reads its window: as ideal traffic, the input once
		// and the output once, a reduction of the input to outs values.
		return []ops.Op{{Kind: ops.Reduce, DType: dt, Rows: outs, Cols: numel(x) / outs}}, nil
	case "aten::relu", "aten::relu_", "aten::silu", "aten::silu_", "aten::gelu", "aten::gelu_":
		x, ok := c.tensor(0)
		if !ok {
			return nil, noModel("input shape not recorded")
		}
		kind := map[string]ops.Kind{"relu": ops.ReLU, "silu": ops.SiLU, "gelu": ops.GELU}[strings.TrimSuffix(strings.TrimPrefix(name, "aten::"), "_")]
		return []ops.Op{{Kind: kind, DType: dt, Elems: numel(x), Tanh: c.concrete(1) == "tanh"}}, nil
	case "aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_", "aten::div", "aten::div_",
		"aten::threshold_backward", "aten::maximum", "aten::minimum", "aten::where",
		"aten::gelu_backward", "aten::silu_backward", "aten::sigmoid_backward", "aten::tanh_backward",
		"aten::addcmul", "aten::addcmul_", "aten::addcdiv", "aten::addcdiv_", "aten::lerp", "aten::lerp_",
		"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge":
		return elementwise(c)
	case "aten::neg", "aten::neg_", "aten::rsqrt", "aten::rsqrt_", "aten::sqrt", "aten::pow", "aten::exp", "aten::log",
		"aten::sin", "aten::cos", "aten::tanh", "aten::sigmoid", "aten::abs", "aten::reciprocal", "aten::clamp", "aten::clamp_",
		"aten::clamp_min", "aten::clamp_min_", "aten::fill_", "aten::zero_", "aten::dropout":
		x, ok := c.tensor(0)
		if !ok {
			return nil, noModel("input shape not recorded")
		}
		return []ops.Op{{Kind: ops.Unary, DType: dt, Elems: numel(x)}}, nil
	case "aten::to", "aten::_to_copy", "aten::copy_", "aten::clone", "aten::contiguous", "aten::reshape",
		"aten::cat", "aten::index_copy_", "aten::index_select", "aten::repeat_interleave", "aten::expand_as":
		return copyOp(c)
	}
	if a, ok := attention[name]; ok {
		q, ok1 := c.tensor(0)
		k, ok2 := c.tensor(1)
		if !ok1 || !ok2 || len(q) != 4 || len(k) != 4 {
			return nil, noModel("query and key shapes not recorded")
		}
		o := ops.Op{Kind: ops.Attention, DType: dt, B: q[0], Heads: q[1], KVHeads: k[1], SeqQ: q[2], SeqK: k[2], HeadDim: q[3],
			Causal: c.concrete(a.causal) == "True"}
		if a.bshd {
			o.Heads, o.KVHeads, o.SeqQ, o.SeqK = q[2], k[2], q[1], k[1]
		}
		if o.KVHeads <= 0 || o.Heads%o.KVHeads != 0 {
			return nil, noModel("%d query heads over %d key/value heads", o.Heads, o.KVHeads)
		}
		return []ops.Op{o}, nil
	}
	if strings.HasPrefix(name, "aten::_foreach_") {
		return foreach(c)
	}
	return nil, noModel("no model for %s", strings.TrimPrefix(name, "aten::"))
}

// gemm models mm (A, B), addmm and baddbmm (bias, A, B), bmm, matmul (with
// broadcast batch dimensions) and linear (x, W[N,K], bias).
func gemm(c call) ([]ops.Op, error) {
	name := c.op.Name
	a, b, bias := 0, 1, -1
	switch name {
	case "aten::addmm", "aten::baddbmm":
		a, b, bias = 1, 2, 0
	case "aten::linear":
		bias = 2
	}
	x, ok1 := c.tensor(a)
	y, ok2 := c.tensor(b)
	if !ok1 || !ok2 {
		return nil, noModel("operand shapes not recorded")
	}
	o := ops.Op{Kind: ops.Matmul, DType: c.compute, Batch: 1}
	if o.DType == "" {
		o.DType, _ = c.typ(a)
	}
	if bias >= 0 {
		_, o.Bias = c.tensor(bias)
	}
	switch {
	case name == "aten::linear":
		if len(y) != 2 {
			return nil, noModel("linear weight of %d dimensions", len(y))
		}
		o.Kind, o.M, o.K, o.N = ops.Linear, numel(x[:len(x)-1]), x[len(x)-1], y[0]
	case len(x) == 1 && len(y) == 1:
		o.M, o.K, o.N = 1, x[0], 1
	case len(y) == 1:
		o.M, o.K, o.N = numel(x[:len(x)-1]), x[len(x)-1], 1
	case len(y) == 2:
		// A batch of A rows against one B: one product, rows stacked.
		o.K, o.N = y[0], y[1]
		o.M = numel(x) / o.K
	default:
		if len(x) == 1 {
			x = []int64{1, x[0]}
		}
		o.M, o.K, o.N = x[len(x)-2], x[len(x)-1], y[len(y)-1]
		o.Batch = max(numel(x[:len(x)-2]), numel(y[:len(y)-2]))
	}
	if o.M <= 0 || o.N <= 0 || o.K <= 0 {
		return nil, noModel("empty product")
	}
	return []ops.Op{o}, nil
}

// conv models a 2-D convolution from (input, weight, bias, ...) with the
// stride, padding, dilation and groups at the positions given.
func conv(c call, stride, pad, dil, groups int) ([]ops.Op, error) {
	x, ok1 := c.tensor(0)
	w, ok2 := c.tensor(1)
	if !ok1 || !ok2 || len(x) != 4 || len(w) != 4 {
		return nil, noModel("only 2-D convolutions are modelled")
	}
	s, _ := c.ints(stride)
	p, _ := c.ints(pad)
	d, _ := c.ints(dil)
	if len(s) == 0 || len(p) == 0 {
		return nil, noModel("stride and padding not recorded")
	}
	for _, v := range d {
		if v != 1 {
			return nil, noModel("dilated convolution")
		}
	}
	if s[0] != s[len(s)-1] || p[0] != p[len(p)-1] {
		return nil, noModel("stride or padding differ between height and width")
	}
	g, err := strconv.ParseInt(c.concrete(groups), 10, 64)
	if err != nil || g < 1 {
		g = 1
	}
	_, bias := c.tensor(2)
	o := ops.Op{Kind: ops.Conv2D, DType: c.compute, N: x[0], C: x[1], H: x[2], W: x[3],
		K: w[0], R: w[2], S: w[3], Stride: s[0], Pad: p[0], Groups: g, Bias: bias}
	if o.DType == "" {
		o.DType, _ = c.typ(0)
	}
	if o.P() <= 0 || o.Q() <= 0 {
		return nil, noModel("the filter does not fit the input")
	}
	return []ops.Op{o}, nil
}

// elementwise models a binary op: an add of equal shapes, or, where one
// side broadcasts (a bias, a scalar), a one-input op over the larger.
func elementwise(c call) ([]ops.Op, error) {
	x, ok1 := c.tensor(0)
	y, ok2 := c.tensor(1)
	if !ok1 && !ok2 {
		return nil, noModel("operand shapes not recorded")
	}
	dt, _ := c.typ(0)
	if !ok1 {
		x, dt = y, first(c.typ(1))
	}
	kind := ops.Add
	if strings.HasPrefix(c.op.Name, "aten::mul") || strings.HasPrefix(c.op.Name, "aten::div") {
		kind = ops.Mul
	}
	if !ok2 || numel(y) != numel(x) {
		n := max(numel(x), numel(y))
		return []ops.Op{{Kind: ops.Unary, DType: dt, Elems: n}}, nil
	}
	return []ops.Op{{Kind: kind, DType: dt, Elems: numel(x)}}, nil
}

func first(d devices.DType, _ bool) devices.DType { return d }

// copyOp models copies and casts: the elements moved, read in the source
// type and written in the destination's.
func copyOp(c call) ([]ops.Op, error) {
	name := c.op.Name
	src := 0
	switch name {
	case "aten::copy_":
		src = 1
	case "aten::index_copy_":
		src = 3
	}
	var n int64
	var dt devices.DType
	if name == "aten::cat" {
		if len(c.op.Inputs) == 0 || len(c.op.Inputs[0].List) == 0 {
			return nil, noModel("the tensor list's shapes were not recorded")
		}
		for _, d := range c.op.Inputs[0].List {
			n += numel(d)
		}
		if dt = c.compute; dt == "" {
			return nil, noModel("the trace records no data type for tensor lists")
		}
	} else {
		x, ok := c.tensor(src)
		if !ok {
			return nil, noModel("input shape not recorded")
		}
		n = numel(x)
		var known bool
		if dt, known = c.typ(src); !known {
			return nil, noModel("no size for %s data", c.op.Types[src])
		}
	}
	o := ops.Op{Kind: ops.Copy, DType: dt, Out: dt, Elems: n}
	switch name {
	case "aten::copy_":
		o.Out, _ = c.typ(0)
	case "aten::to", "aten::_to_copy":
		// The target type is the first integer Scalar argument.
		for i := 1; i < len(c.op.Concrete) && i < len(c.op.Types); i++ {
			if t, ok := scalarTypes[c.op.Concrete[i]]; ok && c.op.Types[i] == "Scalar" {
				o.Out = t
				break
			}
		}
	}
	if o.DType == "" || o.Out == "" {
		return nil, noModel("no size for the copied data")
	}
	return []ops.Op{o}, nil
}

// foreach models an optimizer's _foreach_ op when the trace recorded its
// tensor lists' shapes: one elementwise pass over every tensor of the lists.
func foreach(c call) ([]ops.Op, error) {
	var n int64
	lists := 0
	for _, in := range c.op.Inputs {
		if len(in.List) > 0 {
			lists++
			if n == 0 {
				for _, d := range in.List {
					n += numel(d)
				}
			}
		}
	}
	if n == 0 {
		return nil, noModel("the trace records no shapes for tensor lists")
	}
	dt := c.compute
	if dt == "" {
		dt = devices.FP32
	}
	kind := ops.Unary
	if lists >= 2 {
		kind = ops.Add
	}
	return []ops.Op{{Kind: kind, DType: dt, Elems: n}}, nil
}
