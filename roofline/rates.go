package roofline

// LaunchOverhead is the fixed time the model adds to each op's expected
// time (kernel launch and timing), seconds: the device's measured figure
// where it has one, else the efficiency catalog's.
func (m *Model) LaunchOverhead() float64 { return m.launch }

// StreamBandwidth is the DRAM bandwidth a streaming kernel (copy,
// elementwise) achieves on the device, bytes per second: the measured copy
// bandwidth where the device has one, else the datasheet's times the memory
// type's achievable fraction.
func (m *Model) StreamBandwidth() float64 { return m.stream }
