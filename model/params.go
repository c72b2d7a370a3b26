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

// attentionParams is one layer's attention weights, biases and q/k norms.
func (c Config) attentionParams() int64 {
	d, h, kv, hd := c.Hidden, c.Heads, c.KVHeads, c.HeadDim
	if c.MLA() {
		var q int64
		if c.QLoRARank > 0 {
			q = d*c.QLoRARank + c.QLoRARank + c.QLoRARank*h*c.HeadDim // q_a, its norm, q_b
		} else {
			q = d * h * c.HeadDim
		}
		kvA := d*(c.KVLoRARank+c.QKRopeDim) + c.KVLoRARank // kv_a_proj_with_mqa and its norm
		kvB := c.KVLoRARank * h * (c.QKNopeDim + c.VHeadDim)
		return q + kvA + kvB + h*c.VHeadDim*d
	}
	n := d*h*hd + 2*d*kv*hd + h*hd*d
	if c.QKVBias {
		n += h*hd + 2*kv*hd
	}
	if c.OBias {
		n += d
	}
	if c.QKNorm {
		n += 2 * hd
	}
	return n
}

// mlpParams is a gated MLP (gate, up, down) of width i.
func (c Config) mlpParams(i int64) int64 {
	n := 3 * c.Hidden * i
	if c.MLPBias {
		n += 2*i + c.Hidden
	}
	return n
}

// Params counts the model's parameters.
func (c Config) Params() Params {
	var p Params
	p.Embedding = c.Vocab * c.Hidden
	if !c.TiedEmbeddings {
		p.LMHead = c.Vocab * c.Hidden
	}
	p.Norms = c.Hidden // final norm
	var active int64
	for i := range int(c.Layers) {
		p.Attention += c.attentionParams()
		p.Norms += c.NormsPerLayer * c.Hidden
		if !c.MoE(i) {
			p.MLP += c.mlpParams(c.Intermediate)
			continue
		}
		p.Router += c.Experts * c.Hidden
		p.Experts += c.Experts * c.mlpParams(c.MoEIntermediate)
		active += c.TopK * c.mlpParams(c.MoEIntermediate)
		if c.SharedExperts > 0 {
			p.MLP += c.mlpParams(c.SharedExperts * c.MoEIntermediate)
		}
	}
	p.Total = p.Embedding + p.LMHead + p.Attention + p.MLP + p.Experts + p.Router + p.Norms
	p.Active = p.Total - p.Experts + active
	return p
}
