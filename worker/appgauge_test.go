package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The gauge lists a small fleet every 15 s, and a larger one as often per
// 1,000 apps, so that its listings cost the same whatever the fleet's size.
func TestGaugePausesLongerForALargerFleet(t *testing.T) {
	for n, want := range map[int]time.Duration{
		0: 15 * time.Second, 1: 15 * time.Second, 1999: 15 * time.Second,
		2000: 30 * time.Second, 5000: 75 * time.Second, 10000: 150 * time.Second,
	} {
		assert.Equal(t, want, gaugePause(15*time.Second, n), "%d apps", n)
	}
}
