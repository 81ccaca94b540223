package claims

import (
	"strings"
	"testing"
	"time"
)

// benchMail is about 1 KB of the prose verifiers read: a customer mail with a greeting, a list,
// dates, times, amounts, a phone number, a correction and a sign-off.
var benchMail = strings.Join([]string{
	"Hi Sanne,",
	"",
	"thank you for your patience. Here is where things stand for your Zaandam deliveries:",
	"",
	"- VF-88402 (De Kaasmakers) was scanned as delivered by mistake; it is at our Utrecht depot, new ETA Tuesday 6 January 08:00 CET.",
	"- VF-88405 was delivered after all, today at 1:50 pm.",
	"- From Monday 12 January we deliver to Distributieweg 20, 1505 HX Zaandam instead of Havenweg 4.",
	"",
	"The pallet deposit on your account is EUR 1,187.50 (95 pallets at EUR 12.50 each). The fuel surcharge stays at 14%,",
	"not 13.5% as the old sheet said. Loading at the dock takes about 45 minutes per truck.",
	"",
	"If anything is unclear, call our dispatch desk on +31 10 555 0142 between 9 am and 5 pm; Dirk Peeters is on duty until Friday.",
	"",
	"Kind regards,",
	"Greta Vogel, Verdant Freight",
}, "\n")

func benchOptions() Options {
	return Options{Written: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), Location: time.FixedZone("", 3600), Region: "NL",
		Names: []KnownName{{Key: "Sanne Mulder", Class: Person}, {Key: "Dirk Peeters", Class: Person}, {Key: "Greta Vogel", Class: Person},
			{Key: "De Kaasmakers B.V.", Class: Company}, {Key: "Tulpen Retail", Class: Company}, {Key: "Zaandam", Class: Place}, {Key: "Utrecht", Class: Place}}}
}

// BenchmarkRead reads the claims of about 1 KB of text: the first reading of a text (the cost a
// verifier pays once per text and episode), and a reading served from the cache (every later one).
//
//	go test ./stdlib/claims -run XXX -bench Read -benchmem
func BenchmarkRead(b *testing.B) {
	opt := benchOptions()
	b.Run("first", func(b *testing.B) {
		b.SetBytes(int64(len(benchMail)))
		for i := 0; i < b.N; i++ {
			if len(read(benchMail, opt).Claims()) == 0 {
				b.Fatal("no claims")
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.SetBytes(int64(len(benchMail)))
		for i := 0; i < b.N; i++ {
			if len(Read(benchMail, opt).Claims()) == 0 {
				b.Fatal("no claims")
			}
		}
	})
}

// BenchmarkStates checks a statement about 1 KB of text already read (the reading is cached).
func BenchmarkStates(b *testing.B) {
	opt := benchOptions()
	v, err := ParseValue("2026-01-12", "", opt)
	if err != nil {
		b.Fatal(err)
	}
	d := Read(benchMail, opt)
	b.SetBytes(int64(len(benchMail)))
	for i := 0; i < b.N; i++ {
		if !d.States(v, []string{"Distributieweg"}).OK {
			b.Fatal("not stated")
		}
	}
}
