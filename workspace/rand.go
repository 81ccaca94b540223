package workspace

import (
	"errors"
	"fmt"
	"math/bits"
)

// pcgStream is the second PCG seed word: a state seeded with s uses NewPCG(uint64(s), pcgStream).
const pcgStream = 0x636f776f726b656e // "coworken"

// Rand is the seeded random source of a state: a math/rand/v2 PCG whose 128-bit state is copied
// by Fork, so a fork continues the parent's sequence. Every draw is a pure function of the seed
// and the sequence of draws before it: Int and IntN take one or more 64-bit outputs of the PCG
// and map them to the range with Lemire's multiply-and-reject method (implemented here, so the
// draws do not depend on math/rand's own range functions). Choice, shuffle and sample in the
// scripting layer are built on IntN, so they inherit this. Drawing changes the state of the
// source, so a frozen state refuses it; the source is not part of the state hash.
type Rand State

// Int returns a number in [lo, hi], both ends included.
func (r *Rand) Int(lo, hi int64) (int64, error) {
	s := (*State)(r)
	if lo > hi {
		return 0, fmt.Errorf("empty range: lo %d is greater than hi %d", lo, hi)
	}
	if s.frozen {
		return 0, ErrFrozen
	}
	span := uint64(hi) - uint64(lo) // hi-lo, exact in uint64
	if span == ^uint64(0) {
		return int64(s.rng.Uint64()), nil
	}
	return lo + int64(s.bounded(span+1)), nil
}

// IntN returns a number in [0, n). n must be positive.
func (r *Rand) IntN(n int) (int, error) {
	s := (*State)(r)
	if n <= 0 {
		return 0, errors.New("IntN: n must be positive")
	}
	if s.frozen {
		return 0, ErrFrozen
	}
	return int(s.bounded(uint64(n))), nil
}

// bounded returns a uniform number in [0, n), n > 0 (Lemire, "Fast Random Integer Generation in
// an Interval", 2019).
func (s *State) bounded(n uint64) uint64 {
	hi, lo := bits.Mul64(s.rng.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.rng.Uint64(), n)
		}
	}
	return hi
}
