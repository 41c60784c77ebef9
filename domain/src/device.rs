//! Owns a device's first name: its browser and system, read from the
//! `User-Agent` it subscribed to push with ("Chrome on Android"), so that a
//! person with a phone and a laptop tells their channels apart.

/// The most characters a device's name may have, given or chosen.
pub const NAME_MAX: usize = 64;

/// The browser and system `user_agent` names, in words; "a browser" and
/// "a device" stand for what it does not say.
pub fn device_name(user_agent: &str) -> String {
    let has = |word: &str| user_agent.contains(word);
    // Order matters: Edge and Opera say Chrome too, Chrome says Safari.
    let browser = if has("Edg/") || has("EdgA/") || has("EdgiOS/") {
        "Edge"
    } else if has("OPR/") || has("Opera") {
        "Opera"
    } else if has("SamsungBrowser/") {
        "Samsung Internet"
    } else if has("Firefox/") || has("FxiOS/") {
        "Firefox"
    } else if has("Chrome/") || has("Chromium/") || has("CriOS/") {
        "Chrome"
    } else if has("Safari/") {
        "Safari"
    } else {
        "a browser"
    };
    let system = if has("iPhone") {
        "iPhone"
    } else if has("iPad") {
        "iPad"
    } else if has("Android") {
        "Android"
    } else if has("Windows") {
        "Windows"
    } else if has("Mac OS X") || has("Macintosh") {
        "macOS"
    } else if has("CrOS") {
        "ChromeOS"
    } else if has("Linux") {
        "Linux"
    } else {
        "a device"
    };
    format!("{browser} on {system}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_named_by_its_browser_and_system() {
        for (user_agent, name) in [
            (
                "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
                "Chrome on Android",
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
                "Safari on iPhone",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
                "Edge on Windows",
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:133.0) Gecko/20100101 Firefox/133.0",
                "Firefox on macOS",
            ),
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
                "Chrome on Linux",
            ),
            ("", "a browser on a device"),
        ] {
            assert_eq!(device_name(user_agent), name, "{user_agent}");
        }
    }
}
