// Package console holds no code: its tests drive package console of
// gatewaykit in headless Chromium with chromedp
// (github.com/chromedp/chromedp). They live in module
// github.com/gatewaykit/gatewaykit/sdk so that the browser driver and its
// dependencies stay out of the kit's go.mod.
package console
