//go:build !race

package isolate_test

const raceBuild = false
