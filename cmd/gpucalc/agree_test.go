package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// runJSON runs gpucalc in-process and decodes its JSON output.
func runJSON(t *testing.T, stdin string, args ...string) any {
	t.Helper()
	out, errOut, code := runInput([]byte(stdin), append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("gpucalc %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("gpucalc %s: %v", strings.Join(args, " "), err)
	}
	return v
}

// at follows a path of keys and indexes through decoded JSON.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// TestCommandsAgree: train, train batch, check --phase train and model
// answer one setup with the same figures wherever they share a quantity,
// under the same name. Before, train batch's grads_bytes and
// activations_bytes were other quantities than train's under those names
// (every gradient, and every saved activation, where train gives those
// alive at the peak).
func TestCommandsAgree(t *testing.T) {
	for _, c := range []struct {
		model, device, method, precision, ckpt string
		batch, seq, gpus, zero                 int
	}{
		{"llama-3.2-1b", "h100", "full", "bf16", "none", 2, 1024, 1, 0},
		{"llama-3.1-8b", "h100", "lora", "bf16", "full", 4, 2048, 1, 0},
		{"llama-3.1-8b", "h200", "full", "mixed", "full", 1, 4096, 8, 3},
		{"llama-3.1-8b", "h100", "full", "bf16", "none", 64, 8192, 1, 0}, // does not fit
	} {
		name := fmt.Sprintf("%s %s %s %s %s %dx%d gpus %d zero %d", c.model, c.device, c.method, c.precision, c.ckpt, c.batch, c.seq, c.gpus, c.zero)
		t.Run(name, func(t *testing.T) {
			flags := []string{"--device", c.device, "--method", c.method, "--precision", c.precision, "--ckpt", c.ckpt,
				"--batch", fmt.Sprint(c.batch), "--gpus", fmt.Sprint(c.gpus), "--zero", fmt.Sprint(c.zero)}
			tr := runJSON(t, "", append([]string{"train", c.model, "--seq", fmt.Sprint(c.seq)}, flags...)...)
			row := fmt.Sprintf("model,device,method,precision,ckpt,batch,seq,gpus,zero\n%s,%s,%s,%s,%s,%d,%d,%d,%d\n",
				c.model, c.device, c.method, c.precision, c.ckpt, c.batch, c.seq, c.gpus, c.zero)
			b := at(runJSON(t, row, "train", "batch", "--input", "-"), 0)
			ck := at(runJSON(t, "", append([]string{"check", "--model", c.model, "--phase", "train", "--seq", fmt.Sprint(c.seq)}, flags...)...), "reports", 0)
			// model's tensor parallelism over the same GPUs: one usable memory.
			mo := runJSON(t, "", "model", c.model, "--device", c.device, "--tp", fmt.Sprint(c.gpus))

			same := func(what string, x, y any) {
				t.Helper()
				xf, xok := x.(float64)
				yf, yok := y.(float64)
				if xok && yok && (xf == yf || math.Abs(xf-yf) <= 1e-9*math.Abs(xf)) || !xok && !yok && x == y {
					return
				}
				t.Errorf("%s: %v and %v", what, x, y)
			}
			mem := func(k string) any { return at(tr, "memory", k) }
			same("params (train, train batch)", at(tr, "params", "params"), at(b, "params"))
			same("trainable params (train, train batch)", at(tr, "params", "trainable_params"), at(b, "trainable_params"))
			for _, k := range []string{"weights_bytes", "optimizer_bytes", "peak_bytes", "fits", "verdict", "grads_held_bytes", "activations_saved_bytes"} {
				same(k+" (train, train batch)", mem(k), at(b, k))
			}
			// Every key train batch writes that train's JSON also has means the same there.
			for k, v := range b.(map[string]any) {
				if w := at(tr, "memory", k); w != nil {
					same(k+" (train batch, train's memory)", w, v)
				}
			}
			fits := mem("fits") == true
			if fits {
				step := at(tr, "time", "step_seconds").(float64)
				same("step (train, train batch)", step*1e3, at(b, "step_ms"))
				same("step (train, check)", step, at(ck, "expected_seconds"))
				same("tokens/s (train, train batch)", at(tr, "time", "tokens_per_second"), at(b, "tokens_per_s"))
				same("MFU (train, train batch)", at(tr, "time", "mfu"), at(b, "mfu"))
			} else {
				same("step (train batch)", nil, at(b, "step_ms"))
				same("step (check)", nil, at(ck, "expected_seconds"))
			}
			capacity := false
			for _, f := range at(ck, "findings").([]any) {
				capacity = capacity || at(f, "check") == "memory_capacity"
			}
			if capacity == fits {
				t.Errorf("check: memory_capacity finding %v for a step that fits %v", capacity, fits)
			}
			// model and train count against one usable memory (model.Usable:
			// CUDA's allocatable less the context and, over several GPUs,
			// NCCL's communicator), and check's findings quote train's.
			if mem("usable_bytes") == nil {
				t.Fatal("train's JSON has no memory.usable_bytes")
			}
			same("usable (model, train)", at(mo, "memory", "usable_bytes"), mem("usable_bytes"))
			quoted := 0
			for _, f := range at(ck, "findings").([]any) {
				for k, v := range map[string]any{"usable_bytes": mem("usable_bytes"), "peak_bytes": mem("peak_bytes")} {
					if w := at(f, "numbers", k); w != nil {
						quoted++
						same(k+" (check's "+fmt.Sprint(at(f, "check"))+" finding, train)", w, v)
					}
				}
			}
			if !fits && quoted == 0 {
				t.Errorf("check: no finding quotes the peak or the usable memory of a step that does not fit")
			}
			// model and train count the same parameters (LoRA's adapters
			// apart), and, trained in bf16 on one GPU, the same weights.
			base := at(tr, "params", "params").(float64) - at(tr, "params", "adapter_params").(float64)
			same("params (model, train)", at(mo, "memory", "params", "total"), base)
			if c.method == "full" && c.precision == "bf16" && c.gpus == 1 {
				same("weights (model, train)", at(mo, "memory", "weights_bytes"), mem("weights_bytes"))
			}
		})
	}
}
