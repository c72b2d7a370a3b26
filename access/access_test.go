package access

import "testing"

// Expected values are worked by hand from the model in the package comment
// and agree with the CUDA Best Practices Guide's figures (unit stride: 4
// sectors for 4-byte words; stride 2: 50% efficiency; stride 32 on shared
// memory: 32-way conflict; padding to 33: conflict-free).
func TestCoalesce(t *testing.T) {
	tests := []struct {
		p                     Pattern
		sectors, lines, ideal int
		eff                   float64
	}{
		{Pattern{ElemBytes: 4, Stride: 1}, 4, 1, 4, 1},
		{Pattern{ElemBytes: 4, Stride: 1, Offset: 4}, 5, 2, 4, 0.8},
		{Pattern{ElemBytes: 4, Stride: 2}, 8, 2, 4, 0.5},
		{Pattern{ElemBytes: 4, Stride: 8}, 32, 8, 4, 0.125},
		{Pattern{ElemBytes: 4, Stride: 32}, 32, 32, 4, 0.125},
		{Pattern{ElemBytes: 8, Stride: 1}, 8, 2, 8, 1},
		{Pattern{ElemBytes: 16, Stride: 1}, 16, 4, 16, 1},
		{Pattern{ElemBytes: 2, Stride: 1}, 2, 1, 2, 1},
		{Pattern{ElemBytes: 4, Stride: 0}, 1, 1, 1, 0.125},
		{Pattern{ElemBytes: 16, Stride: 2}, 32, 8, 16, 0.5},
	}
	for _, tt := range tests {
		c, err := Coalesce(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		if c.Sectors != tt.sectors || c.Lines != tt.lines || c.IdealSectors != tt.ideal || c.Efficiency != tt.eff {
			t.Errorf("%+v: sectors %d lines %d ideal %d eff %g; want %d %d %d %g", tt.p, c.Sectors, c.Lines, c.IdealSectors, c.Efficiency, tt.sectors, tt.lines, tt.ideal, tt.eff)
		}
	}
}

func TestBankConflicts(t *testing.T) {
	tests := []struct {
		p                  Pattern
		phases, waves, way int
	}{
		{Pattern{ElemBytes: 4, Stride: 1}, 1, 1, 1},
		{Pattern{ElemBytes: 4, Stride: 2}, 1, 2, 2},
		{Pattern{ElemBytes: 4, Stride: 4}, 1, 4, 4},
		{Pattern{ElemBytes: 4, Stride: 32}, 1, 32, 32},
		{Pattern{ElemBytes: 4, Stride: 33}, 1, 1, 1},
		{Pattern{ElemBytes: 4, Stride: 0}, 1, 1, 1}, // broadcast
		{Pattern{ElemBytes: 1, Stride: 1}, 1, 1, 1}, // 4 lanes share a word
		{Pattern{ElemBytes: 8, Stride: 1}, 2, 2, 1},
		{Pattern{ElemBytes: 8, Stride: 2}, 2, 4, 2},
		{Pattern{ElemBytes: 16, Stride: 1}, 4, 4, 1},
		{Pattern{ElemBytes: 4, Stride: 3}, 1, 1, 1}, // odd strides are conflict-free
		{Pattern{ElemBytes: 4, Stride: 16}, 1, 16, 16},
	}
	for _, tt := range tests {
		c, err := BankConflicts(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		if c.Phases != tt.phases || c.Wavefronts != tt.waves || c.Way != tt.way {
			t.Errorf("%+v: phases %d wavefronts %d way %d; want %d %d %d", tt.p, c.Phases, c.Wavefronts, c.Way, tt.phases, tt.waves, tt.way)
		}
	}
}

func TestInvalid(t *testing.T) {
	for _, p := range []Pattern{{ElemBytes: 3, Stride: 1}, {ElemBytes: 4, Stride: -1}, {ElemBytes: 4, Stride: 1, Offset: -2}} {
		if _, err := Coalesce(p); err == nil {
			t.Errorf("Coalesce(%+v): want an error", p)
		}
		if _, err := BankConflicts(p); err == nil {
			t.Errorf("BankConflicts(%+v): want an error", p)
		}
	}
}
