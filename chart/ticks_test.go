package chart

import (
	"strings"
	"testing"
)

func TestDecadeTicks(t *testing.T) {
	var labels []string
	for _, tk := range decadeTicks(0.01, 1e4) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.01 0.1 1 10 100 1k 10k" {
		t.Errorf("labels %q", got)
	}
}
