package train

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/model"
)

// TestReadBatchRefuses: a row is read as the flags are. Each case lost
// something silently before: batch and seq 0 became 1 and 2048, gpus, tp
// and lora_rank 0 the defaults, a cell past the header vanished, a
// misspelt or repeated column was ignored.
func TestReadBatchRefuses(t *testing.T) {
	const head = "model,device,method,precision,ckpt,batch,seq"
	for _, c := range []struct {
		name, in, want string
		header         bool // the error is the header's, not a row's
	}{
		{"batch 0", head + "\nllama-3.2-1b,h100,full,bf16,none,0,1024\n", "column 6 (batch) \"0\": expected a whole number from 1 to 65536", false},
		{"seq 0", head + "\nllama-3.2-1b,h100,full,bf16,none,1,0\n", "column 7 (seq) \"0\"", false},
		{"seq 1", head + "\nllama-3.2-1b,h100,full,bf16,none,1,1\n", "column 7 (seq) \"1\"", false},
		{"gpus 0", head + ",gpus\nllama-3.2-1b,h100,full,bf16,none,1,1024,0\n", "column 8 (gpus) \"0\"", false},
		{"tp 0", head + ",tp\nllama-3.2-1b,h100,full,bf16,none,1,1024,0\n", "column 8 (tp) \"0\"", false},
		{"zero 4", head + ",zero\nllama-3.2-1b,h100,full,bf16,none,1,1024,4\n", "column 8 (zero) \"4\": expected a whole number from 0 to 3", false},
		{"lora_rank 0", head + ",lora_rank\nllama-3.2-1b,h100,lora,bf16,none,1,1024,0\n", "column 8 (lora_rank) \"0\"", false},
		{"lora_rank without lora", head + ",lora_rank\nllama-3.2-1b,h100,full,bf16,none,1,1024,8\n", "column 8 (lora_rank) \"8\": a LoRA rank needs method lora", false},
		{"a cell past the header", head + "\nllama-3.2-1b,h100,full,bf16,none,1,1024,8\n", "8 fields, the header has 7", false},
		{"a cell short", head + ",gpus\nllama-3.2-1b,h100,full,bf16,none,1,1024\n", "7 fields, the header has 8", false},
		{"bucket_view maybe", head + ",gpus,bucket_view\nllama-3.2-1b,h100,full,bf16,none,1,1024,2,maybe\n", `column 9 (bucket_view) "maybe": expected true or false`, false},
		{"misspelt gpus", head + ",gpu\nllama-3.2-1b,h100,full,bf16,none,1,1024,8\n", `line 1, column 8: unknown column "gpu"`, true},
		{"misspelt zero", head + ",zero_stage\nllama-3.2-1b,h100,full,bf16,none,1,1024,3\n", `line 1, column 8: unknown column "zero_stage"`, true},
		{"a repeated column", head + ",tp,tp\nllama-3.2-1b,h100,full,bf16,none,1,1024,1,2\n", `line 1, columns 8 and 9: both are "tp"`, true},
		{"a missing column", "model,device,method,precision,ckpt,batch\nllama-3.2-1b,h100,full,bf16,none,1\n", `line 1: no column "seq"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, rows, err := ReadBatch(strings.NewReader(c.in))
			if c.header {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil || len(rows) != 1 {
				t.Fatalf("%v, %d rows", err, len(rows))
			}
			if rows[0].Line != 2 || rows[0].Err == nil || !strings.Contains(rows[0].Err.Error(), c.want) {
				t.Errorf("row error %v, want %q", rows[0].Err, c.want)
			}
		})
	}
}

// TestReadBatchDefaults: an empty cell is the flag's default, and the
// columns may come in any order.
func TestReadBatchDefaults(t *testing.T) {
	in := "seq,batch,model,device,method,precision,ckpt,tp,gpus,zero,lora_rank\n" +
		",,llama-3.2-1b,h100,lora,bf16,,,,,\n" +
		"1024,4,llama-3.2-1b,h100,full,bf16,full,2,8,3,\n"
	_, rows, err := ReadBatch(strings.NewReader(in))
	if err != nil || len(rows) != 2 || rows[0].Err != nil || rows[1].Err != nil {
		t.Fatalf("%v %+v", err, rows)
	}
	want := Request{Method: LoRA, Batch: DefaultBatch, Seq: DefaultSeq, GPUs: 1, TP: 1, LoRARank: DefaultRank}.Defaults()
	if got := rows[0].Request; got.Batch != want.Batch || got.Seq != want.Seq || got.GPUs != 1 || got.TP != 1 || got.LoRARank != DefaultRank || got.Ckpt != NoCkpt {
		t.Errorf("empty cells: %+v, want the defaults %+v", got, want)
	}
	if got := rows[1].Request; got.Batch != 4 || got.Seq != 1024 || got.GPUs != 8 || got.TP != 2 || got.ZeRO != 3 || got.Ckpt != FullCkpt {
		t.Errorf("reordered columns: %+v", got)
	}
}

// A quantized checkpoint is refused, as model refuses a scheme it does
// not model: it was priced as bf16.
func TestQuantizedRefused(t *testing.T) {
	base := `{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 100, "hidden_act": "silu"`
	for qc, want := range map[string]string{
		`{"quant_method": "awq", "bits": 4, "group_size": 128}`: "it ships awq 4-bit weights (quantization_config)",
		`{"quant_method": "mxfp4"}`:                             "it ships mxfp4 4-bit weights (quantization_config)",
	} {
		c, err := model.Parse("cfg", []byte(base+`, "quantization_config": `+qc+"}"))
		if err != nil {
			t.Fatal(err)
		}
		if err := (Request{}).Defaults().Validate(c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", qc, err, want)
		}
		if _, err := Analyze(c, Request{}, h100(t)); err == nil {
			t.Errorf("%s: Analyze answered", qc)
		}
	}
}
