package chart

import (
	"strconv"

	"gonum.org/v1/plot"
)

// niceStep picks a tick step of 1, 2 or 4 times a power of two (the
// quantities are powers of two: 32 threads, 256 registers, 228 KiB) giving
// about 8 ticks.
func niceStep(hi float64) float64 {
	step := 1.0
	for hi/step > 10 {
		step *= 2
	}
	return step
}

func ticks(lo, hi, step float64) []plot.Tick {
	var t []plot.Tick
	for v := lo; v <= hi+step/1e6; v += step {
		t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return t
}
