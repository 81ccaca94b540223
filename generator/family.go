package generator

import (
	"fmt"
	"strconv"
	"strings"
)

// ScenarioOf names the scenario a generated task file was drawn from (package split's families:
// tasks of one scenario stay in one split): NewScenario of the seed its header records, as
// "Company (domain), User" — the same for every file drawn from that seed, in any run. "" for a
// file without the generator's header.
func ScenarioOf(src []byte) string {
	text := string(src)
	if !strings.HasPrefix(text, headerPrefix) {
		return ""
	}
	head, _, _ := strings.Cut(text, "\n\n")
	for line := range strings.SplitSeq(head, "\n") {
		if v, ok := strings.CutPrefix(line, "# seed: "); ok {
			seed, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return ""
			}
			sc := NewScenario(seed)
			return fmt.Sprintf("%s (%s), %s", sc.Company, sc.Domain, sc.User.Name)
		}
	}
	return ""
}
