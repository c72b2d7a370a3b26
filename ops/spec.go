package ops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
)

// DefaultDType is the data type of an op spec that names none.
const DefaultDType = devices.BF16

// SpecHelp describes the op spec syntax, for --help.
const SpecHelp = `An op spec is the op's name followed by key=value pairs and flags:
  matmul    m= n= k= [batch=] [bias] [dtype=] [out_dtype=] [weight_dtype=] [quant=]   C[m,n] = A[m,k]·B[k,n]
  linear    tokens= in= out= [bias] [quant=]                  a matmul with shared weight
  layernorm rows= cols=        rmsnorm rows= cols=        softmax rows= cols=
  gelu n= [erf|tanh]   gelu_tanh n=   relu n=   silu n=   add n=   mul n=   copy n= [repeat=]
  attention b= h= [kv=] s= | sq= sk= d= [causal|full] [flash|naive] [impl=split|rows|heads|triton] [kv_dtype=] [paged [konly]]
  conv2d    n= c= h= w= k= r= s= [stride=1] [pad=0|same] [groups=1]
  allreduce n= | bytes= ranks= [impl=nccl]   a sum over tensor-parallel GPUs; impl=nccl: NCCL's own
            collective as nccl-tests times it (ring LL or Simple, or NVLS on NVLink switches), not calls back in a graph
  alltoall  n= | bytes= ranks=   each GPU's n elements in equal parts to every GPU (EP dispatch)
  moe       tokens= hidden= inter= topk= experts= [tp=1] [ep=1] [dtype=|quant=]
            [dist=balanced|uniform|power_law:A] [gated|ungated]
            [impl=triton|trtllm|cutlass|marlin]   a mixture-of-experts layer on one GPU
  mla       b= h= sq= sk= [causal] [kv_dtype=] [absorbed|expanded] [kv_lora=512]
            [rope=64] [nope=128] [v=128] [q_lora=1536] [impl=triton]   latent attention (DeepSeek-V3 geometry)
dtype= is fp64, fp32, tf32, bf16 (default), fp16, fp8 (e4m3), e5m2, int8 or fp4.
out_dtype= defaults to the input type, except int8 → int32 and fp8 → bf16.
weight_dtype= stores B (a linear's weight) in another type, dequantized to
dtype= to compute (weight-only quantization; fp4 for 4-bit int4 weights).
quant= runs the product as serving engines run quantized layers: the weight
stored quantized with its scales, the dtype= (bf16) activation quantized on
the fly by a kernel of its own, the GEMM on the scheme's tensor cores:
fp8 (per-tensor scales), fp8_block (1x128 activation, 128x128 weight scales,
DeepSeek-V3), nvfp4 (e2m1, an e4m3 scale per 16; Blackwell), mxfp4 (e2m1,
an e8m0 scale per 32; Blackwell), w4a8_mxfp4_mxfp8 (mxfp4 weights, fp8
activations with an e8m0 scale per 32), and the weight-only w4a16_mxfp4
and int4_wo (a bf16 scale per 128): 4-bit weights dequantized into a bf16
GEMM, no activation kernel. A GPU without the scheme's tensor cores is
refused. bf16 or none: no quantization.
impl= is flash attention's schedule: split (default) splits the keys over
CTAs when query tiles are too few to fill the SMs, all query heads of a KV
group sharing one read of K and V, then merges the splits (flash-decoding);
rows folds a KV group's query heads into query rows and never splits (at
decode, one CTA per batch × KV head); heads gives each query head its own
CTA and never splits (a masked SDPA kernel).
kv_dtype= stores attention's K and V in another type (an fp8 KV cache).
paged is a serving engine's attention layer over a paged KV cache: a kernel
appends this step's K and V to the cache before the attention kernel, and
the layer costs its GPU family's fixed engine overhead besides (metadata,
cache writes; fitted on aiconfigurator's SGLang tables).
konly is a paged decode step (sq=1) over a K-only cache (TensorRT-LLM's
SELFKONLY, as aiconfigurator's TensorRT-LLM collector builds it): V's block
offsets point at K's blocks, so the cache is read once from memory and V's
reads hit L2.
copy repeat=R writes each of n/R input elements R times (repeat_kv).
moe: h=hidden tokens on this GPU routed to topk of the experts (inter wide,
gated SiLU unless ungated); tp splits every expert, ep the experts (this
GPU holds experts/ep); dist=balanced (default: the choices spread evenly),
uniform (random choices: fewer experts hit) or power_law:A routing, whose
busiest expert this GPU holds; quant= is a matmul's scheme, for the
experts' GEMMs (bf16 for none; w4a16_mxfp4 and int4_wo keep bf16 GEMMs on
4-bit weights; nvfp4 and mxfp4 need fp4 tensor cores). The router's logits
are a linear layer of their own and the all-to-all dispatch a collective
(alltoall), not in it. impl= names SGLang's MoE kernel: triton (fused MoE,
tiled by SGLang's tuned configuration for the GPU and shape, else its
default; 4-bit mxfp4 weights upcast to bf16 at load), trtllm (FlashInfer's
TensorRT-LLM kernels, datacenter Blackwell), cutlass or marlin; by default
trtllm on datacenter Blackwell, triton elsewhere.
mla: h query heads on this GPU; expanded (default when sq > 1) attends over
per-head keys (nope+rope) and values (v) the model projected from the
latent; absorbed (default when sq = 1, FlashMLA's form) over the latent
itself (keys kv_lora+rope, values kv_lora, read once for all heads).
impl=triton prices SGLang's Triton attention kernels (the default on GPUs
without FlashMLA, FlashAttention 3 or TensorRT-LLM MLA kernels: Ada).
shape= takes roof_bench's form instead of the sizes: ` + ShapeHelp + `.`

// ShapeHelp is roof_bench's shape of each op family (shape=, and the shape
// column of a batch file), for --help.
const ShapeHelp = `matmul MxNxK, norms and
softmax ROWSxCOLS, elementwise N, attention BxHxSxD, conv2d NxCxHxWxKxRxS
(stride 1, same padding)`

// kindAliases maps accepted op names to kinds; gelu_tanh selects the tanh
// approximation.
var kindAliases = map[string]Kind{
	"matmul": Matmul, "gemm": Matmul, "mm": Matmul, "bmm": Matmul,
	"linear": Linear, "layernorm": LayerNorm, "layer_norm": LayerNorm, "ln": LayerNorm,
	"rmsnorm": RMSNorm, "rms_norm": RMSNorm, "softmax": Softmax,
	"gelu": GELU, "gelu_erf": GELU, "gelu_tanh": GELU, "relu": ReLU, "silu": SiLU, "swish": SiLU,
	"add": Add, "mul": Mul, "copy": Copy, "attention": Attention, "attn": Attention, "sdpa": Attention,
	"conv2d": Conv2D, "conv": Conv2D, "allreduce": AllReduce, "all_reduce": AllReduce, "alltoall": AllToAll, "all_to_all": AllToAll,
	"moe": MoE, "mla": MLA,
}

// Parse parses an op spec such as "matmul m=4096 n=4096 k=4096 dtype=bf16"
// or "attention b=8 h=16 s=4096 d=128 causal"; see SpecHelp.
func Parse(spec string) (Op, error) {
	return parse(spec, DefaultDType)
}

func parse(spec string, dtype devices.DType) (Op, error) {
	fields := strings.Fields(spec)
	if len(fields) == 0 {
		return Op{}, fmt.Errorf("empty op spec; expected e.g. \"matmul m=4096 n=4096 k=4096 dtype=bf16\"")
	}
	name := strings.ToLower(fields[0])
	kind, ok := kindAliases[name]
	if !ok {
		return Op{}, fmt.Errorf("op spec %s: unknown op %s; expected one of %s", rows.Quote(spec), rows.Quote(fields[0]), kindList())
	}
	o := Op{Kind: kind, DType: dtype, Tanh: name == "gelu_tanh", Batch: 1, Stride: 1, Groups: 1}
	if kind == MoE {
		o.TP, o.EP = 1, 1
	}
	var formGiven bool
	var samePad, haveShape, haveOut bool
	var s, sq, sk, msgBytes int64
	// given holds what each setting was given as, to refuse a second,
	// different one ("m=1 m=2", "causal full").
	type setting struct{ as, value string }
	given := map[any]setting{}
	if o.Tanh {
		given["gelu variant"] = setting{fields[0], "tanh"}
	}
	once := func(what any, as string) error {
		value := strings.ToLower(as)
		if prev, ok := given[what]; ok && prev.value != value {
			return fmt.Errorf("%s and %s conflict; give one", rows.Quote(prev.as), rows.Quote(as))
		}
		given[what] = setting{as, value}
		return nil
	}
	for _, f := range fields[1:] {
		key, val, isKV := strings.Cut(f, "=")
		key = strings.ToLower(key)
		var err error
		if !isKV {
			if err = once(o.flagGroup(key), f); err == nil {
				err = o.flag(key)
			}
			if err != nil {
				return Op{}, fmt.Errorf("op spec %s: %w", rows.Quote(spec), err)
			}
			continue
		}
		switch key {
		case "dtype":
			if err = once("dtype", f); err == nil {
				o.DType, err = devices.ParseDType(val)
			}
		case "weight_dtype", "wdtype":
			if kind != Matmul && kind != Linear {
				err = fmt.Errorf("unknown key %s for %s", rows.Quote(key), kind)
			} else if err = once("weight_dtype", f); err == nil {
				o.Weight, err = devices.ParseDType(val)
			}
		case "out_dtype", "odtype":
			if err = once("out_dtype", f); err == nil {
				o.Out, err = devices.ParseDType(val)
			}
			haveOut = true
		case "shape":
			for _, d := range o.shapeDims() {
				if err == nil {
					err = once(d, f)
				}
			}
			if err == nil {
				err = o.setShape(val)
			}
			haveShape = true
			samePad = kind == Conv2D
		case "quant":
			switch kind {
			case Matmul, Linear, MoE:
				if err = once("quant", f); err == nil {
					o.Quant, err = ParseQuant(val)
				}
			default:
				err = fmt.Errorf("unknown key %s for %s", rows.Quote(key), kind)
			}
		case "dist":
			if kind != MoE {
				err = fmt.Errorf("unknown key %s for %s", rows.Quote(key), kind)
			} else if err = once("dist", f); err == nil {
				err = o.setDist(val)
			}
		case "kv_dtype":
			if kind != MLA && kind != Attention {
				err = fmt.Errorf("unknown key %s for %s", rows.Quote(key), kind)
			} else if err = once("kv_dtype", f); err == nil {
				o.KVType, err = devices.ParseDType(val)
			}
		case "impl":
			if kind != Attention && kind != AllReduce && kind != MoE && kind != MLA {
				err = fmt.Errorf("unknown key %s for %s", rows.Quote(key), kind)
			} else if err = once("impl", f); err == nil {
				err = o.setImpl(val)
			}
		case "bias":
			if err = once("bias", f); err == nil {
				o.Bias, err = parseBool(key, val)
			}
		case "bytes":
			if kind != AllReduce && kind != AllToAll {
				err = fmt.Errorf("unknown key %s for %s", rows.Quote(key), kind)
			} else if err = once("bytes", f); err == nil {
				msgBytes, err = parseDim(key, val)
			}
		case "pad", "padding":
			if err = once(&o.Pad, f); err != nil {
				break
			}
			if kind == Conv2D && strings.EqualFold(val, "same") {
				samePad = true
			} else if kind == Conv2D && strings.EqualFold(val, "valid") {
				samePad, o.Pad = false, 0
			} else {
				samePad = false
				err = o.set(key, val, &s, &sq, &sk)
			}
		default:
			if t := o.target(key, &s, &sq, &sk); t != nil {
				err = once(t, f)
			}
			if err == nil {
				err = o.set(key, val, &s, &sq, &sk)
			}
		}
		if err != nil {
			return Op{}, fmt.Errorf("op spec %s: %w", rows.Quote(spec), err)
		}
	}
	if kind == MLA {
		if sq == 0 {
			sq = s
		}
		if sk == 0 {
			sk = s
		}
		o.SeqQ, o.SeqK = sq, sk
		o.mlaDefaults()
		_, formGiven = given["mla form"]
		if !formGiven {
			o.Absorbed = o.SeqQ == 1
		}
	}
	if kind == Attention && !haveShape {
		if sq == 0 {
			sq = s
		}
		if sk == 0 {
			sk = s
		}
		o.SeqQ, o.SeqK = sq, sk
	}
	if msgBytes > 0 {
		size := int64(o.DType.Size())
		if size == 0 || msgBytes%size != 0 {
			return Op{}, fmt.Errorf("op spec %s: bytes=%d is not a whole number of %s elements", rows.Quote(spec), msgBytes, o.DType)
		}
		o.Elems = msgBytes / size
	}
	if kind == Attention && o.KVHeads == 0 {
		o.KVHeads = o.Heads
	}
	if o.Repeat == 1 {
		o.Repeat = 0 // a copy
	}
	if o.Naive && o.Paged {
		return Op{}, fmt.Errorf("op spec %s: paged is an engine's flash attention layer; naive attention has none", rows.Quote(spec))
	}
	if o.KOnly && (!o.Paged || o.SeqQ != 1) {
		return Op{}, fmt.Errorf("op spec %s: konly is a paged decode step's K-only cache: add paged and give sq=1", rows.Quote(spec))
	}
	if o.Naive && o.Impl != "" {
		return Op{}, fmt.Errorf("op spec %s: impl= schedules flash attention; naive attention has none", rows.Quote(spec))
	}
	if samePad {
		if o.R != o.S || o.R%2 == 0 || o.Stride != 1 {
			return Op{}, fmt.Errorf("op spec %s: same padding needs an odd square filter (r=s) and stride 1; give pad= instead", rows.Quote(spec))
		}
		o.Pad = (o.R - 1) / 2
	}
	if !haveOut {
		o.Out = defaultOut(kind, o.DType)
	}
	if err := o.validate(); err != nil {
		return Op{}, fmt.Errorf("op spec %s: %w", rows.Quote(spec), err)
	}
	return o, nil
}

// defaultOut is the output type when none is given: matrix products of int8
// accumulate into int32 and of fp8 write bf16 (torch._int_mm,
// torch._scaled_mm); everything else keeps its type.
func defaultOut(k Kind, in devices.DType) devices.DType {
	if k == Matmul || k == Linear || k == Conv2D || k == MoE || k == MLA {
		switch in {
		case devices.INT8:
			return devices.INT32
		case devices.FP8E4M3, devices.FP8E5M2, devices.FP4:
			return devices.BF16
		}
	}
	return in
}

func kindList() string {
	var s []string
	for _, k := range Kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// flagGroup names the setting a bare word chooses, so that two words for
// one setting conflict.
func (o *Op) flagGroup(w string) string {
	switch w {
	case "tanh", "erf":
		return "gelu variant"
	case "causal", "full":
		return "mask"
	case "naive", "flash":
		return "attention kernel"
	case "absorbed", "expanded":
		return "mla form"
	case "gated", "ungated":
		return "experts' gate"
	}
	return w
}

// flag applies a bare word: a variant (causal, tanh, bias, ...).
func (o *Op) flag(w string) error {
	switch {
	case w == "bias" && (o.Kind == Matmul || o.Kind == Linear || o.Kind == Conv2D):
		o.Bias = true
	case (w == "tanh" || w == "erf") && o.Kind == GELU:
		o.Tanh = w == "tanh"
	case (w == "causal" || w == "full") && (o.Kind == Attention || o.Kind == MLA):
		o.Causal = w == "causal"
	case (w == "absorbed" || w == "expanded") && o.Kind == MLA:
		o.Absorbed = w == "absorbed"
	case (w == "gated" || w == "ungated") && o.Kind == MoE:
		o.Ungated = w == "ungated"
	case (w == "naive" || w == "flash") && o.Kind == Attention:
		o.Naive = w == "naive"
	case w == "paged" && o.Kind == Attention:
		o.Paged = true
	case w == "konly" && o.Kind == Attention:
		o.KOnly = true
	default:
		return fmt.Errorf("unknown word %s for %s (flags: bias for matmul/linear/conv2d; erf, tanh for gelu; causal, full, flash, naive, paged, konly for attention; causal, absorbed, expanded for mla; gated, ungated for moe)", rows.Quote(w), o.Kind)
	}
	return nil
}

// setImpl sets flash attention's schedule; split, the default, is stored
// as "".
func (o *Op) setImpl(val string) error {
	if o.Kind == MoE {
		v := strings.ToLower(val)
		if !slices.Contains(MoEImpls, v) {
			return fmt.Errorf("impl=%s: expected %s (or no impl=: the kernel the engine runs by default on the GPU)", rows.Quote(val), strings.Join(MoEImpls, ", "))
		}
		o.Impl = v
		return nil
	}
	if o.Kind == MLA {
		if !strings.EqualFold(val, ImplTriton) {
			return fmt.Errorf("impl=%s: expected triton (or no impl=: the kernel the engine runs by default on the GPU)", rows.Quote(val))
		}
		o.Impl = ImplTriton
		return nil
	}
	if o.Kind == AllReduce {
		if !strings.EqualFold(val, ImplNCCL) {
			return fmt.Errorf("impl=%s: expected nccl (or no impl=: calls back to back as engines make them)", rows.Quote(val))
		}
		o.Impl = ImplNCCL
		return nil
	}
	switch strings.ToLower(val) {
	case ImplSplit:
		o.Impl = ""
	case ImplRows, ImplHeads, ImplTriton:
		o.Impl = strings.ToLower(val)
	default:
		return fmt.Errorf("impl=%s: expected split, rows, heads or triton", rows.Quote(val))
	}
	return nil
}

func parseDim(key, val string) (int64, error) {
	v, err := strconv.ParseInt(val, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%s=%s is not a positive whole number (at most 9223372036854775807)", key, rows.Quote(val))
	}
	return v, nil
}

// target is the size a key sets, or nil for a key the op does not take.
func (o *Op) target(key string, s, sq, sk *int64) *int64 {
	var target *int64
	switch o.Kind {
	case Matmul:
		target = map[string]*int64{"m": &o.M, "n": &o.N, "k": &o.K, "batch": &o.Batch, "b": &o.Batch}[key]
	case Linear:
		target = map[string]*int64{"tokens": &o.M, "m": &o.M, "in": &o.K, "k": &o.K, "out": &o.N, "n": &o.N}[key]
	case LayerNorm, RMSNorm, Softmax:
		target = map[string]*int64{"rows": &o.Rows, "cols": &o.Cols}[key]
	case Copy:
		target = map[string]*int64{"n": &o.Elems, "elems": &o.Elems, "repeat": &o.Repeat}[key]
	case GELU, ReLU, SiLU, Add, Mul:
		target = map[string]*int64{"n": &o.Elems, "elems": &o.Elems}[key]
	case AllReduce, AllToAll:
		target = map[string]*int64{"n": &o.Elems, "elems": &o.Elems, "ranks": &o.Ranks}[key]
	case Attention:
		target = map[string]*int64{"b": &o.B, "batch": &o.B, "h": &o.Heads, "heads": &o.Heads, "kv": &o.KVHeads,
			"kv_heads": &o.KVHeads, "s": s, "sq": sq, "sk": sk, "d": &o.HeadDim}[key]
	case Conv2D:
		target = map[string]*int64{"n": &o.N, "c": &o.C, "h": &o.H, "w": &o.W, "k": &o.K, "r": &o.R, "s": &o.S,
			"stride": &o.Stride, "pad": &o.Pad, "padding": &o.Pad, "groups": &o.Groups}[key]
	case MoE:
		target = map[string]*int64{"tokens": &o.Tokens, "t": &o.Tokens, "hidden": &o.Hidden, "inter": &o.Inter, "topk": &o.TopK,
			"experts": &o.Experts, "tp": &o.TP, "ep": &o.EP}[key]
	case MLA:
		target = map[string]*int64{"b": &o.B, "batch": &o.B, "h": &o.Heads, "heads": &o.Heads, "s": s, "sq": sq, "sk": sk,
			"kv_lora": &o.KVLoRA, "kv_lora_rank": &o.KVLoRA, "rope": &o.Rope, "nope": &o.Nope, "v": &o.VDim, "q_lora": &o.QLoRA, "q_lora_rank": &o.QLoRA}[key]
	}
	return target
}

// set applies one size.
func (o *Op) set(key, val string, s, sq, sk *int64) error {
	target := o.target(key, s, sq, sk)
	if target == nil {
		return fmt.Errorf("unknown key %s for %s", rows.Quote(key), o.Kind)
	}
	if key == "pad" || key == "padding" {
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("pad=%s: expected a number of pixels, same or valid", rows.Quote(val))
		}
		*target = v
		return nil
	}
	v, err := parseDim(key, val)
	if err != nil {
		return err
	}
	*target = v
	return nil
}

// shapeDims are the sizes a shape= sets, in its order.
func (o *Op) shapeDims() []*int64 {
	switch o.Kind {
	case Matmul, Linear:
		return []*int64{&o.M, &o.N, &o.K}
	case LayerNorm, RMSNorm, Softmax:
		return []*int64{&o.Rows, &o.Cols}
	case GELU, ReLU, SiLU, Add, Mul, Copy:
		return []*int64{&o.Elems}
	case Attention:
		return []*int64{&o.B, &o.Heads, &o.SeqQ, &o.HeadDim}
	case Conv2D:
		return []*int64{&o.N, &o.C, &o.H, &o.W, &o.K, &o.R, &o.S}
	}
	return nil
}

// parseBool reads yes/no words for key=.
func parseBool(key, val string) (bool, error) {
	switch strings.ToLower(val) {
	case "1", "t", "true", "yes", "on":
		return true, nil
	case "0", "f", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%s: expected true or false", key, rows.Quote(val))
}

// setShape applies a roof_bench shape: MxNxK, ROWSxCOLS, N, BxHxSxD or
// NxCxHxWxKxRxS.
func (o *Op) setShape(shape string) error {
	parts := strings.Split(strings.ToLower(shape), "x")
	dims := o.shapeDims()
	if dims == nil {
		return fmt.Errorf("shape=%s: %s takes no shape; give its sizes as keys (see the op spec help)", rows.Quote(shape), o.Kind)
	}
	form := map[Kind]string{Matmul: "MxNxK", Linear: "MxNxK", LayerNorm: "ROWSxCOLS", RMSNorm: "ROWSxCOLS",
		Softmax: "ROWSxCOLS", Attention: "BxHxSxD", Conv2D: "NxCxHxWxKxRxS"}[o.Kind]
	if form == "" {
		form = "N (elements)"
	}
	if len(parts) != len(dims) {
		return fmt.Errorf("shape=%s: %s takes %s", rows.Quote(shape), o.Kind, form)
	}
	for i, p := range parts {
		v, err := parseDim("shape", p)
		if err != nil {
			return fmt.Errorf("shape=%s: %s takes %s, each a positive whole number up to 9223372036854775807", rows.Quote(shape), o.Kind, form)
		}
		*dims[i] = v
	}
	if o.Kind == Attention {
		o.SeqK = o.SeqQ
	}
	return nil
}

// String is the canonical spec of the op; Parse(o.String()) gives o back.
func (o Op) String() string {
	var b strings.Builder
	b.WriteString(string(o.Kind))
	kv := func(k string, v int64) { fmt.Fprintf(&b, " %s=%d", k, v) }
	switch o.Kind {
	case Matmul:
		kv("m", o.M)
		kv("n", o.N)
		kv("k", o.K)
		if o.Batch > 1 {
			kv("batch", o.Batch)
		}
	case Linear:
		kv("tokens", o.M)
		kv("in", o.K)
		kv("out", o.N)
	case LayerNorm, RMSNorm, Softmax:
		kv("rows", o.Rows)
		kv("cols", o.Cols)
	case GELU, ReLU, SiLU, Add, Mul, Copy:
		kv("n", o.Elems)
		if o.Kind == GELU && o.Tanh {
			b.WriteString(" tanh")
		}
		if o.Repeat > 1 {
			kv("repeat", o.Repeat)
		}
	case AllReduce, AllToAll:
		kv("n", o.Elems)
		kv("ranks", o.Ranks)
		if o.Impl != "" {
			b.WriteString(" impl=" + o.Impl)
		}
	case Attention:
		kv("b", o.B)
		kv("h", o.Heads)
		if o.KVHeads != o.Heads {
			kv("kv", o.KVHeads)
		}
		if o.SeqQ == o.SeqK {
			kv("s", o.SeqQ)
		} else {
			kv("sq", o.SeqQ)
			kv("sk", o.SeqK)
		}
		kv("d", o.HeadDim)
		if o.Causal {
			b.WriteString(" causal")
		}
		if o.Naive {
			b.WriteString(" naive")
		}
		if o.Paged {
			b.WriteString(" paged")
		}
		if o.KOnly {
			b.WriteString(" konly")
		}
		if o.Impl != "" {
			b.WriteString(" impl=" + o.Impl)
		}
	case MoE:
		o.moeString(&b)
	case MLA:
		o.mlaString(&b)
	case Conv2D:
		for _, d := range []struct {
			k string
			v int64
		}{{"n", o.N}, {"c", o.C}, {"h", o.H}, {"w", o.W}, {"k", o.K}, {"r", o.R}, {"s", o.S}} {
			kv(d.k, d.v)
		}
		if o.Stride != 1 {
			kv("stride", o.Stride)
		}
		if o.Pad != 0 {
			kv("pad", o.Pad)
		}
		if o.Groups != 1 {
			kv("groups", o.Groups)
		}
	}
	if o.Bias {
		b.WriteString(" bias")
	}
	fmt.Fprintf(&b, " dtype=%s", o.DType)
	if o.Out != defaultOut(o.Kind, o.DType) {
		fmt.Fprintf(&b, " out_dtype=%s", o.Out)
	}
	if o.Weight != "" {
		fmt.Fprintf(&b, " weight_dtype=%s", o.Weight)
	}
	if o.Quant != QuantNone {
		fmt.Fprintf(&b, " quant=%s", o.Quant)
	}
	if o.KVType != "" {
		fmt.Fprintf(&b, " kv_dtype=%s", o.KVType)
	}
	return b.String()
}

// Shape is the op's size in roof_bench's form: MxNxK, ROWSxCOLS, N,
// BxHxSxD (BxHxSQxSKxD when the lengths differ) or NxCxHxWxKxRxS.
func (o Op) Shape() string {
	var d []int64
	switch o.Kind {
	case Matmul, Linear:
		d = []int64{o.M, o.N, o.K}
		if o.Batch > 1 {
			d = append([]int64{o.Batch}, d...)
		}
	case LayerNorm, RMSNorm, Softmax:
		d = []int64{o.Rows, o.Cols}
	case GELU, ReLU, SiLU, Add, Mul, Copy:
		d = []int64{o.Elems}
	case AllReduce, AllToAll:
		d = []int64{o.Elems, o.Ranks}
	case Attention:
		d = []int64{o.B, o.Heads, o.SeqQ, o.HeadDim}
		if o.SeqQ != o.SeqK {
			d = []int64{o.B, o.Heads, o.SeqQ, o.SeqK, o.HeadDim}
		}
	case Conv2D:
		d = []int64{o.N, o.C, o.H, o.W, o.K, o.R, o.S}
	case MoE:
		d = []int64{o.Tokens, o.Hidden, o.Inter, o.TopK, o.Experts}
	case MLA:
		d = []int64{o.B, o.Heads, o.SeqQ, o.SeqK}
	}
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, "x")
}
