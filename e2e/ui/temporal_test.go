package ui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
)

// linkInTemporalUI opens the app's workflow in the Temporal Web UI, shows
// its User Metadata, and waits for the workflow's current details (which
// the Web UI renders in a frame of its own origin) to link to want, under
// the text "Open NAME in Ferry".
func (b *browser) linkInTemporalUI(workflowURL, name, want string) {
	b.t.Helper()
	b.run("open the workflow in the Temporal Web UI", chromedp.Navigate(workflowURL))
	b.waitFor("the Temporal Web UI's User Metadata tab", `(() => {
		const tab = [...document.querySelectorAll('a,button')].find((e) => e.innerText.trim().startsWith('User Metadata'));
		if (tab) tab.click();
		return !!tab;
	})()`, 30*time.Second)
	b.waitFor(fmt.Sprintf("the workflow's details link to %s", want), fmt.Sprintf(`[...document.querySelectorAll('iframe')].some((f) => {
		const doc = f.contentDocument;
		return !!doc && [...doc.querySelectorAll('a')].some((a) => a.innerText.includes(%s) && a.href === %s);
	})`, strconv.Quote("Open "+name+" in Ferry"), strconv.Quote(want)), 30*time.Second)
}
