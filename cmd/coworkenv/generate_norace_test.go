//go:build !race

package main

const genRaceBuild = false
