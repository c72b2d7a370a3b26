package model

// Params counts parameters by where they sit, as transformers builds the
// model: every nn.Parameter once (a tied LM head shares the embedding).
type Params struct {
	Embedding int64 `json:"embedding"`
	// LMHead is 0 when tied to the embedding.
	LMHead    int64 `json:"lm_head"`
	Attention int64 `json:"attention"`
	// MLP counts dense MLPs and shared experts; Experts the routed experts
	// and Router their gates.
	MLP     int64 `json:"mlp"`
	Experts int64 `json:"experts"`
	Router  int64 `json:"router"`
	Norms   int64 `json:"norms"`
	// Active is what one token uses: everything but the routed experts it
	// is not sent to.
	Active int64 `json:"active"`
	Total  int64 `json:"total"`
}

// MaxParams is the most parameters a config may describe: a thousand
// times the largest published model, and below 2^53, so that counting in
// float64 is exact and the counts fit int64. Parse refuses more.
const MaxParams = 1e15

// attentionParams is layer i's attention weights, biases, sinks and q/k
// norms (a linear-attention layer's own weights). Counts are float64 so that
// an absurd config cannot wrap them (int64 would turn negative); below
// MaxParams they are exact.
func (c Config) attentionParams(i int) float64 {
	d, h, kv, hd := float64(c.Hidden), float64(c.Heads), float64(c.KVHeads), float64(c.HeadDim)
	if c.LinearAttention(i) {
		return c.linearParams()
	}
	if c.MLA() {
		ql, kvl, rope, nope, vd := float64(c.QLoRARank), float64(c.KVLoRARank), float64(c.QKRopeDim), float64(c.QKNopeDim), float64(c.VHeadDim)
		q := d * h * hd
		if ql > 0 {
			q = d*ql + ql + ql*h*hd // q_a, its norm, q_b
		}
		kvA := d*(kvl+rope) + kvl // kv_a_proj_with_mqa and its norm
		kvB := kvl * h * (nope + vd)
		return q + kvA + kvB + h*vd*d + c.indexerParams()
	}
	qw := h * hd
	if c.AttnGate {
		qw *= 2 // the output gate's half of q_proj
	}
	n := d*qw + 2*d*kv*hd + h*hd*d
	if c.QKVBias {
		n += qw + 2*kv*hd
	}
	if c.OBias {
		n += d
	}
	if c.Sinks {
		n += h
	}
	if c.QKNorm {
		n += c.qkNormParams()
	}
	return n
}

// qkNormParams is one layer's q and k norms: one head wide each, or all
// heads wide (MiniMax-M2's per-layer norms).
func (c Config) qkNormParams() float64 {
	if c.QKNormFull {
		return float64((c.Heads + c.KVHeads) * c.HeadDim)
	}
	return 2 * float64(c.HeadDim)
}

// indexerParams is DeepSeek sparse attention's indexer in one layer, as
// transformers builds it: wq_b (q_lora_rank → heads × head_dim), wk
// (hidden → head_dim), k_norm (a LayerNorm: weight and bias) and
// weights_proj (hidden → heads).
func (c Config) indexerParams() float64 {
	if !c.DSA() {
		return 0
	}
	d, ih, id := float64(c.Hidden), float64(c.IndexHeads), float64(c.IndexHeadDim)
	return float64(c.QLoRARank)*ih*id + d*id + 2*id + d*ih
}

// linearParams is one gated delta-net layer (Qwen3.5, as transformers
// builds it): in_proj_qkv (hidden → 2·keys + values), in_proj_z (hidden →
// values), in_proj_b and in_proj_a (hidden → value heads each), the
// depthwise conv1d over q, k and v (no bias), dt_bias and A_log per value
// head, the gated RMSNorm (one value head wide) and out_proj.
func (c Config) linearParams() float64 {
	d := float64(c.Hidden)
	keys, values := float64(c.LinearKeyHeads*c.LinearKeyDim), float64(c.LinearValueHeads*c.LinearValueDim)
	vh := float64(c.LinearValueHeads)
	return d*(2*keys+values) + d*values + 2*d*vh + (2*keys+values)*float64(c.LinearConv) + 2*vh + float64(c.LinearValueDim) + values*d
}

// mlpParams is a gated MLP (gate, up, down) of width i.
func (c Config) mlpParams(i float64) float64 {
	d := float64(c.Hidden)
	n := 3 * d * i
	if c.MLPBias {
		n += 2*i + d
	}
	return n
}

// Params counts the model's parameters (exact: Parse refuses a config of
// more than MaxParams).
func (c Config) Params() Params {
	p, _ := c.params()
	return p
}

// params counts the parameters, and returns their total as a float64 that
// cannot wrap, for Parse's range check.
func (c Config) params() (Params, float64) {
	d, v := float64(c.Hidden), float64(c.Vocab)
	emb, head := v*d, v*d
	if c.TiedEmbeddings {
		head = 0
	}
	norms := d // final norm
	var attn, mlp, experts, router, active float64
	moe := float64(c.MoEIntermediate)
	for i := range int(c.Layers) {
		attn += c.attentionParams(i)
		norms += float64(c.NormsPerLayer) * d
		if !c.MoE(i) {
			mlp += c.mlpParams(float64(c.Intermediate))
			continue
		}
		router += float64(c.Experts) * d
		if c.RouterBias {
			router += float64(c.Experts)
		}
		experts += float64(c.Experts) * c.mlpParams(moe)
		active += float64(c.TopK) * c.mlpParams(moe)
		if c.SharedExperts > 0 {
			mlp += c.mlpParams(float64(c.sharedWidth()))
		}
		if c.SharedGate {
			router += d // the shared expert's gate, hidden → 1
		}
	}
	total := emb + head + attn + mlp + experts + router + norms
	if total > MaxParams {
		return Params{}, total
	}
	p := Params{Embedding: int64(emb), LMHead: int64(head), Attention: int64(attn), MLP: int64(mlp), Experts: int64(experts),
		Router: int64(router), Norms: int64(norms), Total: int64(total)}
	p.Active = p.Total - p.Experts + int64(active)
	return p, total
}
