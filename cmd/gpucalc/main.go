// Command gpucalc answers the questions GPU engineers ask before and after
// writing a kernel: occupancy, roofline bounds and a simulated kernel run.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
