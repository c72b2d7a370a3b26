package train

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/query"
)

// TestQuery: the train question's mistakes are field errors in the flags'
// words (the request against the model in the model's), and it prints the
// command line that asks it.
func TestQuery(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Query)
		want string
	}{
		{func(q *Query) { q.Batch = 0 }, "--batch 0: expected 1 or more"},
		{func(q *Query) { q.Method, q.LoRATargets = "lora", "q,x" }, "--lora-targets q,x: "},
		{func(q *Query) { q.Model = "gpt-9" }, `no built-in model "gpt-9"`},
		{func(q *Query) { q.Method, q.Precision = "lora", "mixed" }, "precision mixed applies to full fine-tuning"},
		{func(q *Query) { q.TP, q.GPUs = 3, 3 }, "tp=3 does not divide the 32 heads"},
	} {
		q := NewQuery("llama-3.1-8b")
		tc.mod(&q)
		err := q.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || query.Fields(err) == nil {
			t.Errorf("Validate() = %v, want a field error starting %q", err, tc.want)
		}
	}
	q := NewQuery("llama-3.1-8b")
	q.Method, q.Batch, q.LoRARank = "lora", 4, 64
	if got, want := q.Args().String(), "gpucalc train llama-3.1-8b --method lora --batch 4 --lora-rank 64"; got != want {
		t.Errorf("Args() = %q, want %q", got, want)
	}
}
