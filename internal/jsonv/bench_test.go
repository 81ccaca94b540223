package jsonv

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// objectJSON is an object of n distinct keys with small values.
func objectJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"key_`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`":`)
		b.WriteString(strconv.Itoa(i % 100))
	}
	b.WriteByte('}')
	return b.Bytes()
}

func BenchmarkDecodeObject(b *testing.B) {
	for _, n := range []int{8, 1000, 10000, 200000} {
		data := objectJSON(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
