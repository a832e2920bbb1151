package devenv

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTestNamesAreWhatGoTestRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("a_test.go", `package x
import "testing"
func TestMain(m *testing.M) {}
func TestB(t *testing.T) {}
func Test_under(t *testing.T) {}
func Test2(t *testing.T) {}
func Testify(t *testing.T) {}
func TestHelper(t *testing.T, name string) {}
func BenchmarkB(b *testing.B) {}
type s struct{}
func (s) TestMethod(t *testing.T) {}
`)
	write("b_test.go", "package x_test\nimport \"testing\"\nfunc TestA(t *testing.T) {}\n")
	write("c.go", "package x\nimport \"testing\"\nfunc TestNotInATestFile(t *testing.T) {}\n")

	names, err := testNames(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"Test2", "TestA", "TestB", "Test_under"}, names)

	_, err = testNames(t.TempDir())
	assert.ErrorContains(t, err, "no tests")
}

func TestSharesRunEveryTestOnce(t *testing.T) {
	names := []string{"TestA", "TestB", "TestC", "TestD", "TestE", "TestF.G"}
	runs := map[string]int{}
	for k := 1; k <= 4; k++ {
		skip := regexp.MustCompile(skipPattern(names, k, 4))
		for _, name := range names {
			if !skip.MatchString(name) {
				runs[name]++
			}
		}
	}
	for _, name := range names {
		assert.Equal(t, 1, runs[name], name)
	}
	assert.False(t, regexp.MustCompile(skipPattern(names, 1, 4)).MatchString("TestFxG"), "a name is matched literally")
	assert.Empty(t, skipPattern(names, 1, 1), "one share skips nothing")
}

func TestAShardIsKOfN(t *testing.T) {
	k, n, err := parseShard("2/3")
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 3}, [2]int{k, n})
	for _, bad := range []string{"3", "0/2", "3/2", "a/b", "1/0", "1/2/3"} {
		_, _, err := parseShard(bad)
		assert.ErrorContains(t, err, "FERRY_TEST_SHARD", bad)
	}
}
