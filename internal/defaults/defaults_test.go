package defaults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type limits struct {
	Files   int
	Bytes   int64
	Timeout time.Duration
	Ratio   float64
	Count   uint
	Name    string
	Strict  bool
	private int
}

func TestPositiveFillsWhatIsUnset(t *testing.T) {
	def := limits{Files: 10, Bytes: 1 << 20, Timeout: time.Minute, Ratio: 0.5, Count: 3, Name: "default", Strict: true, private: 7}
	got := Positive(limits{Files: 2, Bytes: -1, Ratio: 0, Name: ""}, def)
	assert.Equal(t, limits{Files: 2, Bytes: 1 << 20, Timeout: time.Minute, Ratio: 0.5, Count: 3}, got,
		"a set field stays, a zero or negative number takes the default, other kinds and unexported fields are left")
	assert.Equal(t, def.Timeout, Positive(limits{Timeout: -time.Second}, def).Timeout)
	assert.Equal(t, 5*time.Second, Positive(limits{Timeout: 5 * time.Second}, def).Timeout)
}
