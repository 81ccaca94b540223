//go:build !race

package generator_test

const raceBuild = false
