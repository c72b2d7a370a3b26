package roofline

// Rate is the achievable rate of the device's peak key (bf16_tensor,
// fp32), operations per second: the measured GEMM rate where the device
// has one, else its family's fraction of the dense peak, as Analyze uses
// it. ok is false where the device has no such peak.
func (m *Model) Rate(key string) (float64, bool) {
	p, ok := m.dev.Dense[key]
	if !ok || p.PerSecond <= 0 {
		return 0, false
	}
	return m.rate(key, p.PerSecond), true
}
