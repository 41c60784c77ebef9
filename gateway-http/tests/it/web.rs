//! The web inbox and action links through the real stack, as a browser
//! without JavaScript sees them: plain HTTP, forms, redirects and HTML.

use crate::common;

use reqwest::StatusCode;
use reqwest::redirect::Policy;

use common::Gateway;
use hado_engine::links::LinkAction;
use hado_proto::v1;
use hado_testing::{Backend, TestCore, source_event, utc};

/// Core and gateway-http in local mode, and a browser without JavaScript;
/// the email test shares it.
pub(crate) struct Stack {
    pub(crate) core: TestCore,
    gateway: Gateway,
    pub(crate) base: String,
    pub(crate) client: reqwest::Client,
    /// The cookie a form's redirect set to say what was done, which the
    /// next page shows and forgets, as a browser keeps it.
    said: std::sync::Mutex<Option<String>>,
}

/// A `Set-Cookie` for what a redirect says was done: `Some("done-7")`, or
/// `Some("")` when a page forgets it.
fn said_cookie(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers.get_all("set-cookie").iter().find_map(|value| {
        let value = value.to_str().ok()?;
        let said = value.strip_prefix("hado_said=")?;
        Some(said.split(';').next().unwrap_or_default().to_owned())
    })
}

impl Stack {
    /// Local mode: the gateway on loopback serves the one local user, anna.
    async fn start(backend: &Backend) -> Self {
        Self::start_configured(backend, "2026-12-11T09:00:00Z", |_| {}).await
    }

    /// The same, at `now`, over a core whose configuration `configure` changes.
    pub(crate) async fn start_configured(
        backend: &Backend,
        now: &str,
        configure: impl FnOnce(&mut hado_core::config::CoreConfig),
    ) -> Self {
        let core = TestCore::start_configured(backend, now, configure).await;
        let mut config = common::config(&core);
        config.local_user = Some("anna".into());
        let gateway = Gateway::start(config).await;
        let client = reqwest::Client::builder().redirect(Policy::none()).build().unwrap();
        Self { core, base: gateway.base.clone(), gateway, client, said: Default::default() }
    }

    pub(crate) async fn get(&self, path: &str) -> (StatusCode, String) {
        let mut request = self.client.get(format!("{}{path}", self.base));
        let said = self.said.lock().unwrap().clone();
        if let Some(said) = said {
            request = request.header("cookie", format!("hado_said={said}"));
        }
        let response = request.send().await.unwrap();
        if said_cookie(response.headers()).is_some_and(|said| said.is_empty()) {
            *self.said.lock().unwrap() = None;
        }
        (response.status(), response.text().await.unwrap())
    }

    /// What the last form's redirect said was done to which event (`done-7`,
    /// from its cookie's first two fields), until a page showed it.
    fn said(&self) -> Option<String> {
        let said = self.said.lock().unwrap().clone()?;
        let mut fields = said.split('.');
        Some(format!("{}-{}", fields.next()?, fields.next()?))
    }

    /// Posts a form the way a browser on the same site does.
    pub(crate) async fn post(
        &self,
        path: &str,
        form: &[(&str, &str)],
    ) -> (StatusCode, String, String) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("sec-fetch-site", "same-origin")
            .form(form)
            .send()
            .await
            .unwrap();
        let location = response
            .headers()
            .get("location")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        if let Some(said) = said_cookie(response.headers()).filter(|said| !said.is_empty()) {
            *self.said.lock().unwrap() = Some(said);
        }
        (response.status(), location, response.text().await.unwrap())
    }

    pub(crate) async fn stop(self) {
        self.gateway.stop().await;
        self.core.stop().await;
    }
}

fn event_id(location: &str) -> i64 {
    location.rsplit("event-").next().unwrap().parse().unwrap()
}

async fn the_web_inbox_works_without_javascript(backend: Backend) {
    let stack = Stack::start(&backend).await;

    let (status, page) = stack.get("/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Nothing needs you right now."), "{page}");
    // Every page has one top heading.
    for path in ["/", "/new", "/archive", "/settings"] {
        let (_, page) = stack.get(path).await;
        assert_eq!(page.matches("<h1").count(), 1, "{path}: {page}");
    }

    // An unknown address: a page with a way back for a browser, JSON for a program.
    let browser = stack
        .client
        .get(format!("{}/no-such-page", stack.base))
        .header("accept", "text/html,*/*;q=0.8")
        .send()
        .await
        .unwrap();
    assert_eq!(browser.status(), StatusCode::NOT_FOUND);
    let page = browser.text().await.unwrap();
    assert!(
        page.contains("There is no page at this address.")
            && page.contains(r#"<a href="/">Back to the inbox</a>"#),
        "{page}"
    );
    let program = stack.client.get(format!("{}/no-such-page", stack.base)).send().await.unwrap();
    assert_eq!(
        program.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!({"error": "no such page"})
    );

    // Add: a bad form comes back with the errors next to the fields and the input kept.
    let (status, _, page) = stack
        .post(
            "/events",
            &[("title", "Dentist"), ("due_date", "2026-12-32"), ("subtitle", "Dr. Weiss")],
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains(r#"id="due-error""#) && page.contains("2026-12-32"), "{page}");
    // The field says it is wrong, and which message says why.
    assert!(
        page.contains(r#"required aria-invalid="true" aria-describedby="due-error">"#),
        "{page}"
    );
    assert!(
        !page.contains(
            r#"name="title" value="Dentist" maxlength="200" required autofocus aria-invalid"#
        ),
        "only the wrong field: {page}"
    );
    assert!(
        page.contains(r#"value="Dentist""#) && page.contains(r#"value="Dr. Weiss""#),
        "the input is kept"
    );

    // A good one redirects to the inbox (POST-redirect-GET), which says so
    // and offers Undo: it deletes what was just added.
    let (status, location, _) = stack
        .post(
            "/events",
            &[
                ("title", "Dentist"),
                ("due_date", "2026-12-14"),
                ("due_time", "15:00"),
                ("after_due", "keep"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let dentist = event_id(&location);
    assert_eq!(location, format!("/#event-{dentist}"));
    assert_eq!(stack.said(), Some(format!("added-{dentist}")), "said in a cookie, not the address");
    let (_, page) = stack.get(&location).await;
    assert_eq!(stack.said(), None, "the page forgets it as it says it");
    assert!(!stack.get(&location).await.1.contains("Added: Dentist."), "a reload says nothing");
    assert!(
        page.contains("Added: Dentist.")
            && page
                .contains(&format!(r#"action="/events/{dentist}/delete"><button>Undo</button>"#)),
        "{page}"
    );
    let (_, location, page) = stack
        .post("/events", &[("title", "Typo"), ("due_date", "2026-12-14"), ("after_due", "keep")])
        .await;
    let typo = event_id(&location);
    let (status, location, _) = stack.post(&format!("/events/{typo}/delete"), &[]).await;
    assert_eq!((status, location), (StatusCode::SEE_OTHER, "/".to_owned()), "{page}");
    assert_eq!(stack.said(), Some(format!("deleted-{typo}")));
    assert!(
        !stack.get("/").await.1.contains(&format!(r#"id="title-{typo}""#)),
        "Undo took the new event out again"
    );
    let (_, location, _) = stack
        .post(
            "/events",
            &[("title", "Tax return"), ("due_date", "2026-12-09"), ("after_due", "keep")],
        )
        .await;
    let tax = event_id(&location);
    let docs = stack.core.source_token("docs").await;
    let fields = v1::EventFields {
        title: "Visa".into(),
        due_at: "2027-03-01".into(),
        done_label: Some("Renewed".into()),
        deep_link: Some("https://docs.example.com/visa".into()),
        ..Default::default()
    };
    let visa = stack.core.push(&docs, "anna", "visa", fields).await;

    let (_, page) = stack.get("/?open=scheduled").await;
    let overdue = page.find("Overdue").expect("an overdue group");
    let preparing = page.find("Preparing").expect("a preparing group");
    let scheduled = page.find("Scheduled").expect("a scheduled group");
    assert!(overdue < preparing && preparing < scheduled, "groups in order of urgency");
    assert!(page.contains("2 days overdue"), "{page}");
    assert!(page.contains("in 3 days, Mon 14 Dec 15:00"), "{page}");
    assert!(
        page.contains(">Renewed</button>")
            && page.contains("https://docs.example.com/visa")
            && page.contains("· from docs")
    );
    // Each button and link says which event it is for.
    assert!(
        page.contains(r#"aria-label="Renewed: Visa">Renewed</button>"#)
            && page.contains(r#"aria-label="Remember: Visa">"#),
        "{page}"
    );
    assert!(page.contains(r#"aria-label="Details: Tax return">Details</a>"#), "{page}");
    assert!(page.contains(&format!("/events/{dentist}/edit")), "own events can be edited");
    assert!(
        page.contains(r#"<span class="badge" id="badge">1</span>"#)
            && page.contains("<title>(1) Inbox · Hado</title>"),
        "the overdue tax return needs attention before any reminder: {page}"
    );
    assert!(
        page.contains(
            r##"<p class="overdue-line"><a href="#overdue">1 overdue — oldest 2 days</a></p>"##
        ),
        "{page}"
    );

    // The next morning's checkpoint (D+3 of the overdue tax return) asks for attention.
    stack.core.clock.set(utc("2026-12-12T07:00:00Z"));
    hado_core::scheduler::drain(&stack.core.engine).await.unwrap();
    let (_, page) = stack.get("/").await;
    assert!(
        page.contains(r#"<span class="badge" id="badge">1</span>"#),
        "one event needs attention, counted once: {page}"
    );
    assert!(
        page.contains(&format!(
            r#"<article class="card overdue attention" id="event-{tax}" tabindex="-1">"#
        )),
        "{page}"
    );

    // Remember, then Done; the event moves to the archive.
    let (status, location, _) = stack.post(&format!("/events/{dentist}/ack"), &[]).await;
    assert_eq!(
        (status, location.as_str(), stack.said()),
        (
            StatusCode::SEE_OTHER,
            format!("/#event-{dentist}").as_str(),
            Some(format!("remembered-{dentist}"))
        )
    );
    let (_, page) = stack.get(&location).await;
    assert!(
        page.contains(r#"<div class="feedback" role="status">"#)
            && page.contains("Remembered: Dentist · quiet until"),
        "{page}"
    );
    // Undo takes Remember back; then Remember again.
    assert!(
        page.contains(&format!(
            r#"<form method="post" action="/events/{dentist}/unack"><button>Undo</button></form>"#
        )),
        "{page}"
    );
    let (_, location, _) = stack.post(&format!("/events/{dentist}/unack"), &[]).await;
    assert_eq!(location, format!("/#event-{dentist}"));
    let (_, page) = stack.get("/").await;
    assert!(!page.contains("quiet until"), "no longer quiet");
    assert!(page.contains("No longer quiet: Dentist."), "Undo says what it did: {page}");
    stack.post(&format!("/events/{dentist}/ack"), &[]).await;
    assert!(stack.get("/").await.1.contains("quiet until"));
    // Remember, with a choice: the event's page offers tomorrow, next week or
    // a day (from tomorrow on); the card says until when in words.
    let (_, page) = stack.get(&format!("/events/{dentist}")).await;
    assert!(page.contains(r#"<button name="until" value="next_week" aria-label="Until next week: Dentist">Until next week</button>"#), "{page}");
    assert!(
        page.contains(
            r#"<input name="until" placeholder="e.g. 14 Mar 2027" autocomplete="off" required>"#
        ),
        "{page}"
    );
    let (status, location, _) =
        stack.post(&format!("/events/{dentist}/ack"), &[("until", "next_week")]).await;
    assert_eq!(
        (status, location.as_str()),
        (StatusCode::SEE_OTHER, format!("/#event-{dentist}").as_str())
    );
    assert!(
        stack.get("/").await.1.contains("quiet until 14 Dec, 08:00"),
        "Saturday the 12th: next week starts on Monday the 14th"
    );
    stack.post(&format!("/events/{dentist}/ack"), &[("until", "2026-12-20")]).await;
    assert!(stack.get("/").await.1.contains("quiet until 20 Dec, 08:00"));
    // A day may be typed as people write dates.
    stack.post(&format!("/events/{dentist}/ack"), &[("until", "21 Dec")]).await;
    assert!(stack.get("/").await.1.contains("quiet until 21 Dec, 08:00"));
    // Done: the inbox says so, and Undo reopens it.
    let (_, location, _) = stack.post(&format!("/events/{tax}/done"), &[]).await;
    assert_eq!((location.as_str(), stack.said()), ("/", Some(format!("done-{tax}"))));
    let (_, page) = stack.get(&location).await;
    assert!(
        page.contains("Done: Tax return.")
            && page.contains(&format!(r#"action="/events/{tax}/reopen"><button>Undo</button>"#)),
        "{page}"
    );
    let (_, archive) = stack.get("/archive").await;
    assert!(
        archive.contains("Tax return") && archive.contains(r#"<p class="meta">Done · "#),
        "{archive}"
    );
    // In the archive it links to its page and keeps its due day; its page says how it ended.
    assert!(
        archive.contains(&format!(r#"<a href="/events/{tax}">Tax return</a>"#))
            && archive.contains(" · due Wed 9 Dec"),
        "{archive}"
    );
    let (_, page) = stack.get(&format!("/events/{tax}")).await;
    assert!(page.contains(r#"<p class="closed">Done · today, 08:00</p>"#), "{page}");
    assert!(
        !page.contains(r#"<button class="done""#)
            && !page.contains(r#"<button class="remember""#)
            && !page.contains("overdue"),
        "a finished event offers no Done or Remember: {page}"
    );
    // Reopen undoes Done, from the event's page.
    assert!(
        page.contains(&format!(
            r#"<form class="actions" method="post" action="/events/{tax}/reopen">
    <button class="reopen" aria-label="Reopen: Tax return">Reopen</button>"#
        )),
        "{page}"
    );
    let (status, location, _) = stack.post(&format!("/events/{tax}/reopen"), &[]).await;
    assert_eq!((status, location), (StatusCode::SEE_OTHER, format!("/#event-{tax}")));
    let (_, page) = stack.get("/").await;
    assert!(page.contains("Back in the inbox: Tax return."), "Reopen says so: {page}");
    stack.post(&format!("/events/{tax}/done"), &[]).await;
    assert!(!stack.get("/").await.1.contains(&format!(r#"id="title-{tax}""#)));

    // Edit and delete one's own event.
    let (status, form) = stack.get(&format!("/events/{dentist}/edit")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        form.contains(r#"value="14 Dec 2026""#) && form.contains(r#"value="15:00""#),
        "dates in the page's language: {form}"
    );
    let (status, _, _) = stack
        .post(
            &format!("/events/{dentist}"),
            &[
                ("title", "Dentist, Dr. Weiss"),
                ("due_date", "2026-12-15"),
                ("due_time", "15:00"),
                ("fire_date", "2026-12-10"),
                ("done_label", "Went"),
                ("after_due", "keep"),
            ],
        )
        .await;
    assert_eq!((status, stack.said()), (StatusCode::SEE_OTHER, Some(format!("saved-{dentist}"))));
    let (_, page) = stack.get("/").await;
    assert!(
        page.contains("Saved: Dentist, Dr. Weiss.") && !page.contains("<button>Undo</button>"),
        "an edit is said, with no Undo: {page}"
    );
    let edited = stack
        .core
        .inbox_as("anna")
        .get_event(v1::EventId { id: dentist })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((edited.fire_at.as_str(), edited.done_label.as_str()), ("2026-12-10", "Went"));
    // Emptied fields go back to their defaults.
    stack
        .post(
            &format!("/events/{dentist}"),
            &[
                ("title", "Dentist, Dr. Weiss"),
                ("due_date", "2026-12-15"),
                ("due_time", "15:00"),
                ("fire_date", ""),
                ("done_label", ""),
                ("after_due", "keep"),
            ],
        )
        .await;
    let reset = stack
        .core
        .inbox_as("anna")
        .get_event(v1::EventId { id: dentist })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((reset.fire_at.as_str(), reset.done_label.as_str()), ("2026-11-15", "Done"));
    // Delete is a link to a page that asks first; its button posts back to it.
    let (status, page) = stack.get(&format!("/events/{dentist}/edit")).await;
    assert!(
        status == StatusCode::OK
            && page.contains(&format!(
                r#"href="/events/{dentist}/delete" data-confirm="Delete this event?" data-subject="Dentist, Dr. Weiss""#
            )),
        "{page}"
    );
    let (status, page) = stack.get(&format!("/events/{dentist}/delete")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("<h1>Delete this event?</h1>")
            && page.contains("Dentist, Dr. Weiss")
            && page
                .contains(r#"<form method="post"><button class="danger">Delete</button></form>"#),
        "{page}"
    );
    assert!(stack.get("/").await.1.contains("Dentist"), "asking deleted nothing");
    // A source's event does not open in the edit form at all.
    let (status, page) = stack.get(&format!("/events/{visa}/edit")).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        page.contains("This event comes from docs; only docs can change it.")
            && !page.contains("<form method=\"post\" action=\"/events/"),
        "{page}"
    );
    let (status, location, _) = stack.post(&format!("/events/{dentist}/delete"), &[]).await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/"));
    let (_, page) = stack.get(&location).await;
    assert!(
        page.contains("Deleted: Dentist, Dr. Weiss.")
            && page
                .contains(&format!(r#"action="/events/{dentist}/reopen"><button>Undo</button>"#)),
        "{page}"
    );
    assert!(!stack.get("/").await.1.contains("Dentist"));
    let (_, archive) = stack.get("/archive").await;
    assert!(
        archive.contains("Dentist, Dr. Weiss") && archive.contains(r#"<p class="meta">Deleted · "#),
        "deleted events are in the archive: {archive}"
    );

    // Far-off events: opened, Scheduled shows its nearest 50 and links to the rest.
    for index in 0..55 {
        let fields = v1::EventFields {
            title: format!("Someday {index:02}"),
            due_at: format!("2028-01-{:02}", index % 28 + 1),
            ..Default::default()
        };
        stack.core.inbox_as("anna").create_event(fields).await.unwrap();
    }
    assert_eq!(
        stack.get("/").await.1.matches(">Someday").count(),
        0,
        "folded, Scheduled puts none on the page"
    );
    let (_, page) = stack.get("/?open=scheduled").await;
    assert_eq!(
        page.matches(">Someday").count(),
        49,
        "the visa, due sooner, takes one of the 50 places"
    );
    assert!(page.contains(r#"<a href="/?all=scheduled#scheduled">Show every scheduled event</a>"#));
    let (_, page) = stack.get("/?all=scheduled").await;
    assert_eq!(page.matches(">Someday").count(), 55);
    // A large preparation group shows its nearest 25 and links to the rest.
    for index in 0..105 {
        let fields = v1::EventFields {
            title: format!("Soon {index:03}"),
            due_at: "2026-12-30".into(),
            ..Default::default()
        };
        stack.core.inbox_as("anna").create_event(fields).await.unwrap();
    }
    let (_, page) = stack.get("/").await;
    assert_eq!(page.matches(">Soon").count(), 25);
    assert!(
        page.contains(r#"<a href="/?all=preparing#preparing">Show every event in preparation</a>"#),
        "{page}"
    );
    assert_eq!(stack.get("/?all=preparing").await.1.matches(">Soon").count(), 105);
    assert_eq!(
        stack.get("/?q=soon").await.1.matches(">Soon").count(),
        105,
        "a search shows every match"
    );
    let response =
        stack.client.get(format!("{}/me/events?limit=3", stack.base)).send().await.unwrap();
    assert_eq!(
        response.json::<serde_json::Value>().await.unwrap()["events"].as_array().unwrap().len(),
        3
    );
    let response =
        stack.client.get(format!("{}/me/events?limit=-3", stack.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // Settings: language switches the whole interface; a bad zone is shown next to the field.
    let (status, page) = stack.get("/settings").await;
    // No bot on this Hado: Telegram is not offered, and the page says why.
    assert!(
        !page.contains("/settings/telegram") && page.contains("HADO_TELEGRAM_BOT_TOKEN"),
        "{page}"
    );
    // No mail server: email is not offered, and only core's log says why.
    assert!(!page.contains("/settings/emails") && !page.contains("HADO_SMTP_URL"), "{page}");
    assert_eq!(status, StatusCode::OK);
    let (status, _, page) = stack.post("/settings/telegram", &[]).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a Connect sent anyway gets the same words, not core's English"
    );
    assert!(
        page.contains("HADO_TELEGRAM_BOT_TOKEN") && !page.contains(r#"class="error""#),
        "{page}"
    );
    // The zones, each with its offset now; the old aliases outside the continents are left out.
    assert!(
        page.contains(r#"<option value="Asia/Tokyo" label="Asia/Tokyo (UTC+09:00)">"#)
            && page.contains(r#"list="zones""#),
        "{page}"
    );
    assert!(
        page.contains(r#"<option value="UTC" label="UTC (UTC+00:00)">"#)
            && !page.contains(r#"value="US/Eastern""#)
            && !page.contains(r#"value="Europe/Kiev""#)
            && !page.contains(r#"value="Asia/Calcutta""#)
            && page.contains(r#"value="Europe/Kyiv""#)
            && page.contains(r#"value="Europe/Oslo""#)
            && !page.contains(r#"value="Japan""#)
    );
    let (status, _, page) = stack
        .post(
            "/settings",
            &[
                ("tz", "Mars/Base"),
                ("quiet_start", "22:00"),
                ("quiet_end", "08:00"),
                ("locale", "en"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        page.contains("Pick a time zone from the list, or type a city.")
            && page.contains(r#"value="Mars/Base""#),
        "in plain words: {page}"
    );
    assert!(
        page.contains(r#"aria-invalid="true" aria-describedby="tz-error tz-unsaved""#)
            && page.contains(r#"<p class="error" id="tz-error">"#),
        "{page}"
    );
    // A city is as good as the zone's name.
    let (status, _, _) = stack
        .post(
            "/settings",
            &[("tz", "tokyo"), ("quiet_start", "22:00"), ("quiet_end", "08:00"), ("locale", "en")],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(
        stack
            .core
            .inbox_as("anna")
            .get_profile(v1::GetProfileRequest::default())
            .await
            .unwrap()
            .into_inner()
            .tz,
        "Asia/Tokyo"
    );
    let (status, location, _) = stack
        .post(
            "/settings",
            &[
                ("tz", "Europe/Berlin"),
                ("quiet_start", "22:00"),
                ("quiet_end", "08:00"),
                ("locale", "ru"),
            ],
        )
        .await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/settings?saved=1"));
    let (_, page) = stack.get("/").await;
    assert!(
        page.contains(r#"<html lang="ru">"#)
            && page.contains("Входящие")
            && page.contains("Запланировано"),
        "{page}"
    );
    assert!(!page.contains(">Inbox<"), "no English left in the navigation");

    // The agent token, shown once with the connect line.
    let (status, _, page) = stack.post("/settings/agent-token", &[]).await;
    let (_, asked) = stack.get("/settings/agent-token/revoke").await;
    assert!(
        asked.contains("Отозвать токен агента?") && asked.contains(r#"href="/settings#agent""#),
        "revoking asks first: {asked}"
    );
    assert_eq!(status, StatusCode::OK);
    // This gateway was not told gateway-mcp's address: the line says so in
    // its place, and a note says how to fill it in, rather than guess.
    assert!(
        page.contains("claude mcp add --transport http hado &#60;gateway-mcp&#39;s /mcp URL&#62; --header &#34;Authorization: Bearer hado_agent_"),
        "{page}"
    );
    assert!(page.contains("HADO_MCP_URL"), "{page}");
    // Each other client's configuration carries the same token, and the
    // JSON ones parse as their client reads them.
    let unescape = |text: &str| {
        text.replace("&#34;", "\"")
            .replace("&#39;", "'")
            .replace("&#60;", "<")
            .replace("&#62;", ">")
            .replace("&#38;", "&")
    };
    let shown = |index: usize| {
        let opening = format!(r#"<pre id="configuration-{index}">"#);
        unescape(
            page.split(&opening)
                .nth(1)
                .and_then(|rest| rest.split("</pre>").next())
                .unwrap_or_else(|| panic!("no configuration {index}")),
        )
    };
    assert!(
        shown(2).starts_with("claude mcp add --transport sse hado <gateway-mcp's /sse URL>"),
        "{}",
        shown(2)
    );
    for (index, key, kind) in [
        (3, "mcpServers", "http"),
        (4, "mcpServers", "sse"),
        (5, "servers", "http"),
        (6, "servers", "sse"),
    ] {
        let configuration: serde_json::Value = serde_json::from_str(&shown(index))
            .unwrap_or_else(|error| panic!("{error}: {}", shown(index)));
        let server = &configuration[key]["hado"];
        assert_eq!(server["type"], kind, "{configuration}");
        assert!(
            server["headers"]["Authorization"].as_str().unwrap().starts_with("Bearer hado_agent_"),
            "{configuration}"
        );
    }
    assert!(
        !stack.get("/settings").await.1.contains("hado_agent_"),
        "the token is not shown again"
    );

    // The calendar address, shown once; it works until turned off.
    let (status, _, page) = stack.post("/settings/calendar", &[]).await;
    assert_eq!(status, StatusCode::OK);
    let feed = page
        .split(r#"<pre id="calendar-url">"#)
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap()
        .to_owned();
    assert!(
        feed.starts_with(&format!("{}/ics/hado_ics_", stack.base)) && feed.ends_with(".ics"),
        "{feed}"
    );
    assert_eq!(stack.client.get(&feed).send().await.unwrap().status(), StatusCode::OK);
    stack.post("/settings/calendar/revoke", &[]).await;
    assert_eq!(stack.client.get(&feed).send().await.unwrap().status(), StatusCode::NOT_FOUND);

    // A form sent from another site is refused and changes nothing.
    let response = stack
        .client
        .post(format!("{}/settings", stack.base))
        .header("sec-fetch-site", "cross-site")
        .form(&[("locale", "en")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(stack.get("/").await.1.contains(r#"<html lang="ru">"#));

    stack.stop().await;
}

async fn action_links_confirm_then_act_and_refuse_what_is_not_valid(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let event = stack
        .core
        .inbox_as("anna")
        .create_event(v1::EventFields {
            title: "Visa".into(),
            due_at: "2026-12-14".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let anna = stack.core.engine.user_for_login("anna").await.unwrap();
    let done =
        stack.core.engine.issue_action_link(&anna, event.id, LinkAction::Done).await.unwrap();
    let remember =
        stack.core.engine.issue_action_link(&anna, event.id, LinkAction::Remember).await.unwrap();

    // GET only shows a confirmation: a link previewer closes nothing.
    let (status, page) = stack.get(&format!("/a/{remember}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("Visa")
            && page.contains("Remember it?")
            && page.contains(r#"<form method="post">"#),
        "{page}"
    );
    let (status, page) = stack.get(&format!("/a/{done}")).await;
    assert!(status == StatusCode::OK && page.contains("Mark as done?"));
    assert_eq!(
        stack
            .core
            .inbox_as("anna")
            .get_event(v1::EventId { id: event.id })
            .await
            .unwrap()
            .get_ref()
            .state()
            .word(),
        "preparing"
    );

    // POST acts; using the same link again changes nothing more.
    let (status, _, page) = stack.post(&format!("/a/{remember}"), &[]).await;
    assert!(
        status == StatusCode::OK && page.contains("quiet until the next scheduled reminder"),
        "{page}"
    );
    let (status, _, page) = stack.post(&format!("/a/{done}"), &[]).await;
    assert!(status == StatusCode::OK && page.contains("Marked as done."), "{page}");
    let closed_at = stack
        .core
        .inbox_as("anna")
        .get_event(v1::EventId { id: event.id })
        .await
        .unwrap()
        .into_inner()
        .closed_at;
    let (status, _, _) = stack.post(&format!("/a/{done}"), &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        stack
            .core
            .inbox_as("anna")
            .get_event(v1::EventId { id: event.id })
            .await
            .unwrap()
            .into_inner()
            .closed_at,
        closed_at,
        "replayed: nothing changed"
    );
    let (_, page) = stack.get(&format!("/a/{remember}")).await;
    assert!(page.contains("already closed") && !page.contains(r#"<form method="post">"#), "{page}");

    // Forged and expired links get a clear page, never an action.
    let other = stack
        .core
        .inbox_as("anna")
        .create_event(v1::EventFields {
            title: "Passport".into(),
            due_at: "2027-01-20".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let forged = done.replacen(&done[..4], "AAAA", 1);
    for (method_post, token) in
        [(false, forged.as_str()), (true, forged.as_str()), (true, "nonsense")]
    {
        let (status, page) = if method_post {
            let (status, _, page) = stack.post(&format!("/a/{token}"), &[]).await;
            (status, page)
        } else {
            stack.get(&format!("/a/{token}")).await
        };
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            page.contains("This link is not valid.")
                && page.contains("Эта ссылка недействительна.")
        );
    }
    // A link from before a reschedule no longer acts.
    let stale =
        stack.core.engine.issue_action_link(&anna, other.id, LinkAction::Done).await.unwrap();
    let moved = v1::UpdateEventRequest {
        id: other.id,
        due_at: Some("2027-02-20".into()),
        ..Default::default()
    };
    stack.core.inbox_as("anna").update_event(moved).await.unwrap();
    for post in [false, true] {
        let (status, page) = if post {
            let (status, _, page) = stack.post(&format!("/a/{stale}"), &[]).await;
            (status, page)
        } else {
            stack.get(&format!("/a/{stale}")).await
        };
        assert_eq!(status, StatusCode::CONFLICT);
        assert!(
            page.contains("This reminder is out of date")
                && !page.contains(r#"<form method="post">"#),
            "{page}"
        );
    }
    assert_eq!(
        stack
            .core
            .inbox_as("anna")
            .get_event(v1::EventId { id: other.id })
            .await
            .unwrap()
            .get_ref()
            .state()
            .word(),
        "scheduled",
        "no action"
    );
    // Nor after the reschedule is undone: links are bound to a counter of
    // changes, not to the fields as they were.
    let back = v1::UpdateEventRequest {
        id: other.id,
        due_at: Some("2027-01-20".into()),
        ..Default::default()
    };
    stack.core.inbox_as("anna").update_event(back).await.unwrap();
    let (status, _, _) = stack.post(&format!("/a/{stale}"), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "rescheduled away and back");
    // A Done link used, then the event reopened: the link does not close it again.
    let (status, _, _) = stack.post(&format!("/a/{done}"), &[]).await;
    assert_eq!(status, StatusCode::OK, "the used link finds the event closed and does nothing");
    stack.core.inbox_as("anna").reopen_event(v1::EventId { id: event.id }).await.unwrap();
    let (status, _, page) = stack.post(&format!("/a/{done}"), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{page}");
    assert_ne!(
        stack
            .core
            .inbox_as("anna")
            .get_event(v1::EventId { id: event.id })
            .await
            .unwrap()
            .get_ref()
            .state()
            .word(),
        "done",
        "reopened, and it stays open"
    );

    let late =
        stack.core.engine.issue_action_link(&anna, other.id, LinkAction::Done).await.unwrap();
    stack.core.clock.set(utc("2027-01-10T09:00:01Z"));
    let (status, _, page) = stack.post(&format!("/a/{late}"), &[]).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(
        page.contains("This link has expired") && !page.contains("Срок действия"),
        "in the person's language only: {page}"
    );
    assert_ne!(
        stack
            .core
            .inbox_as("anna")
            .get_event(v1::EventId { id: other.id })
            .await
            .unwrap()
            .get_ref()
            .state()
            .word(),
        "done",
        "no action"
    );
    // Whoever opens it, the page speaks the language of the person the link was for.
    let russian = v1::UpdateProfileRequest { locale: Some("ru".into()), ..Default::default() };
    stack.core.inbox_as("anna").update_profile(russian).await.unwrap();
    let (status, page) = stack.get(&format!("/a/{late}")).await;
    assert_eq!(status, StatusCode::GONE);
    assert!(
        page.contains("Срок действия ссылки истёк") && !page.contains("This link has expired"),
        "{page}"
    );

    stack.stop().await;
}

/// A webhook receiver on loopback that counts what it is sent.
async fn receiver() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, count)
}

async fn wait_for(count: &std::sync::atomic::AtomicUsize, at_least: usize) {
    for _ in 0..200 {
        if count.load(std::sync::atomic::Ordering::SeqCst) >= at_least {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!(
        "the receiver got {} requests, not {at_least}",
        count.load(std::sync::atomic::Ordering::SeqCst)
    );
}

async fn reminders_go_to_a_webhook_set_up_in_settings(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let (url, received) = receiver().await;

    let (status, _, page) = stack.post("/settings/webhooks", &[("url", "not a url")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains(r#"id="url-error""#) && page.contains(r#"value="not a url""#), "{page}");
    assert!(page.contains(r#"aria-invalid="true" aria-describedby="url-error""#), "{page}");
    let (status, _, page) = stack.post("/settings/webhooks", &[("url", &url)]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"<pre id="webhook-secret">whsec_"#),
        "the secret is shown once: {page}"
    );
    let channel: i64 = page
        .split(r#"id="channel-"#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(!stack.get("/settings").await.1.contains("whsec_"), "and only once");

    let (status, location, _) =
        stack.post(&format!("/settings/channels/{channel}/test"), &[]).await;
    assert_eq!(
        (status, location.as_str()),
        (StatusCode::SEE_OTHER, "/settings?tested=1#reminders")
    );
    wait_for(&received, 1).await;

    // A checkpoint's reminder goes out and shows in the event's log.
    let event = stack
        .core
        .inbox_as("anna")
        .create_event(v1::EventFields {
            title: "Visa".into(),
            due_at: "2026-12-15".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    stack.core.clock.set(utc("2026-12-12T07:00:00Z"));
    hado_core::scheduler::drain(&stack.core.engine).await.unwrap();
    hado_core::delivery::drain(&stack.core.deliverer()).await.unwrap();
    wait_for(&received, 2).await;
    let (status, page) = stack.get(&format!("/events/{}", event.id)).await;
    assert_eq!(status, StatusCode::OK);
    // The log names the channel by its host and says what happened in words;
    // the page says when preparation started and when the next reminder is.
    assert!(page.contains(" · reminder · 127.0.0.1 · <strong>sent</strong>"), "{page}");
    let schedule = page
        .split(r#"<dl class="schedule">"#)
        .nth(1)
        .and_then(|rest| rest.split("</dl>").next())
        .unwrap_or_default();
    assert!(schedule.contains("<dt>Preparation starts</dt><dd>Sun 15 Nov</dd>"), "{schedule}");
    assert!(
        schedule.contains("<dt>Next reminder</dt><dd>14 Dec, 08:00</dd>"),
        "the day before, in the morning: {schedule}"
    );
    assert!(page.contains("today, 08:00 · reminder"), "{page}");
    // A second hook whose receiver is down says so on the settings page
    // from its first failed attempt: when, and why.
    let closed_port =
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (status, _, page) = stack
        .post("/settings/webhooks", &[("url", &format!("http://127.0.0.1:{closed_port}/down"))])
        .await;
    assert_eq!(status, StatusCode::OK);
    let down_channel: i64 = page
        .split(r#"id="channel-"#)
        .last()
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    stack.post(&format!("/settings/channels/{down_channel}/test"), &[]).await;
    hado_core::delivery::drain(&stack.core.deliverer()).await.unwrap();
    let settings = stack.get("/settings").await.1;
    let down = settings
        .split("/down</strong>")
        .nth(1)
        .and_then(|rest| rest.split("</article>").next())
        .unwrap_or_default();
    assert!(down.contains(r#"<p class="error">The last attempt (today, 08:00) failed:"#), "{down}");

    // Off, on, and removed; turning off and removing ask first, naming the channel.
    let (_, asked) = stack.get(&format!("/settings/channels/{channel}/remove")).await;
    assert!(
        asked.contains("<h1>Remove this channel?</h1>") && asked.contains("127.0.0.1"),
        "{asked}"
    );
    assert!(
        stack.get("/settings").await.1.contains(&format!(r#"id="channel-{channel}""#)),
        "asking removed nothing"
    );
    stack.post(&format!("/settings/channels/{channel}/off"), &[]).await;
    assert!(stack.get("/settings").await.1.contains(" · off</p>"));
    stack.post(&format!("/settings/channels/{channel}/remove"), &[]).await;
    assert!(!stack.get("/settings").await.1.contains(&format!(r#"id="channel-{channel}""#)));

    stack.stop().await;
}

/// The titles of the cards on a page, in order.
fn titles(page: &str) -> Vec<String> {
    page.split(r#"<h3 class="title" id="title-"#)
        .skip(1)
        .filter_map(|rest| {
            rest.split_once('>').map(|(_, text)| text.split('<').next().unwrap_or("").to_owned())
        })
        .collect()
}

async fn the_inbox_and_archive_find_by_text_source_and_state(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let anna = stack.core.inbox_as("anna");
    let new = |title: &str, due_at: &str| v1::EventFields {
        title: title.into(),
        due_at: due_at.into(),
        ..Default::default()
    };
    anna.clone().create_event(new("Виза в Японию", "2026-12-11T18:00")).await.unwrap();
    anna.clone().create_event(new("Dentist", "2026-12-20")).await.unwrap();
    anna.clone().create_event(new("Winter tyres", "2027-03-01")).await.unwrap();
    let docs = stack.core.source_token("docs").await;
    stack.core.push(&docs, "anna", "visa", new("Visa renewal", "2026-12-30")).await;

    // Text in any letter case, Cyrillic too; a source; a state; each in the URL.
    assert_eq!(
        titles(&stack.get("/?q=%D0%92%D0%98%D0%97%D0%90").await.1),
        ["Виза в Японию"],
        "ВИЗА finds Виза"
    );
    assert_eq!(titles(&stack.get("/?q=visa").await.1), ["Visa renewal"]);
    assert_eq!(titles(&stack.get("/?source=docs").await.1), ["Visa renewal"]);
    assert_eq!(titles(&stack.get("/?source=manual&state=preparing").await.1), ["Dentist"]);
    let (_, page) = stack.get("/?q=visa&source=docs").await;
    assert!(
        page.contains(r#"<option value="docs" selected>docs</option>"#)
            && page.contains(r#"value="visa""#),
        "the form keeps the filters: {page}"
    );
    assert!(page.contains(r#"<a href="/">Clear</a>"#), "{page}");
    assert!(stack.get("/?q=nothing-like-it").await.1.contains("Nothing matches."));
    let (status, page) = stack.get("/?source=Not%20A%20Source").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{page}");
    assert!(page.contains("source"), "{page}");

    // Scheduled is folded until opened, its count shown; the compact
    // density is a link away and keeps the filters.
    let (_, page) = stack.get("/").await;
    assert!(
        page.contains(r#"<h2>Scheduled <small>1</small></h2>"#)
            && page.contains(
                r#"<a href="/?open=scheduled#scheduled">Show the nearest scheduled events</a>"#
            )
            && !page.contains("Winter tyres"),
        "{page}"
    );
    assert!(stack.get("/?open=scheduled").await.1.contains("Winter tyres"));
    let (_, compact) = stack.get("/?density=compact").await;
    assert!(
        compact.contains(r#"href="/?density=compact&#38;open=scheduled#scheduled""#),
        "unfolding keeps the density: {compact}"
    );
    // Adding a far-off event comes back to its card, with Scheduled unfolded.
    let (_, location, _) =
        stack.post("/events", &[("title", "Summer tyres"), ("due_date", "2027-05-01")]).await;
    let summer = event_id(&location);
    assert_eq!(location, format!("/?open=scheduled#event-{summer}"));
    assert!(stack.get(&location).await.1.contains(&format!(r#"id="event-{summer}""#)));
    assert!(page.contains(r#"<a class="density" href="/?density=compact">Compact</a>"#), "{page}");
    let (_, page) = stack.get("/?q=visa&density=compact").await;
    assert!(
        page.contains(r#"<div class="groups compact">"#)
            && page.contains(r#"<a class="density" href="/?q=visa">Comfortable</a>"#),
        "{page}"
    );
    assert!(
        page.contains(r#"<aside id="shortcuts" class="shortcuts" hidden>"#),
        "the keyboard's help is on the page"
    );

    // The archive searches too.
    let dentist = titles(&stack.get("/?q=dentist").await.1);
    assert_eq!(dentist, ["Dentist"]);
    let listed = anna
        .clone()
        .list_events(v1::ListEventsRequest { text: Some("dentist".into()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    anna.clone().mark_done(v1::EventId { id: listed.events[0].id }).await.unwrap();
    let (_, archive) = stack.get("/archive?q=DENT").await;
    assert!(
        archive.contains("Dentist")
            && archive
                .contains(r#"<form method="get" action="/archive" class="finder" role="search">"#),
        "{archive}"
    );
    assert!(stack.get("/archive?q=tyres").await.1.contains("Nothing matches."));
    stack.stop().await;
}

async fn pages_go_compressed_and_static_files_keep_a_year(backend: Backend) {
    let stack = Stack::start(&backend).await;
    for event in 0..40 {
        let fields = v1::EventFields {
            title: format!("Event {event}"),
            due_at: "2026-12-20".into(),
            ..Default::default()
        };
        stack.core.inbox_as("anna").create_event(fields).await.unwrap();
    }
    let page = stack
        .client
        .get(format!("{}/", stack.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(
        page.headers().get("content-encoding").map(|value| value.to_str().unwrap()),
        Some("gzip")
    );
    // A streamed list goes compressed to its end too.
    let list = stack
        .client
        .get(format!("{}/me/events", stack.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(
        list.headers().get("content-encoding").map(|value| value.to_str().unwrap()),
        Some("gzip")
    );
    let bytes = list.bytes().await.expect("the whole compressed list arrives");
    assert!(bytes.len() > 20 && bytes.starts_with(&[0x1f, 0x8b]), "a gzip stream");
    // The page names its static files by this build's fingerprint; by it they keep a year.
    let (_, html) = stack.get("/").await;
    let version = html
        .split("/static/hado.css?v=")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a fingerprinted stylesheet")
        .to_owned();
    assert!(
        html.contains(&format!(r#"<script src="/static/hado.js?v={version}" defer></script>"#))
            && html.contains(
                r#"<link rel="icon" href="/static/icons/icon-192.png" type="image/png">"#
            )
            && html.contains(r#"<link rel="manifest" href="/static/manifest.webmanifest">"#)
    );
    let cache = |path: String| {
        let client = stack.client.clone();
        async move {
            client.get(path).send().await.unwrap().headers()["cache-control"]
                .to_str()
                .unwrap()
                .to_owned()
        }
    };
    assert_eq!(
        cache(format!("{}/static/hado.css?v={version}", stack.base)).await,
        "public, max-age=31536000, immutable"
    );
    assert_eq!(
        cache(format!("{}/static/hado.js?v={version}", stack.base)).await,
        "public, max-age=31536000, immutable"
    );
    assert_eq!(
        cache(format!("{}/static/hado.css", stack.base)).await,
        "public, max-age=3600",
        "an address without this build's fingerprint is kept an hour"
    );
    assert_eq!(
        cache(format!("{}/static/hado.css?v=old", stack.base)).await,
        "public, max-age=3600"
    );
    stack.stop().await;
}

async fn refusals_speak_the_persons_language(backend: Backend) {
    let stack = Stack::start(&backend).await;
    stack
        .core
        .inbox_as("anna")
        .update_profile(v1::UpdateProfileRequest {
            locale: Some("ru".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    // The form says what is wrong in Russian, in plain words.
    let (status, _, page) = stack
        .post(
            "/events",
            &[("title", "Зубной"), ("due_date", "2026-12-20"), ("fire_date", "2026-12-25")],
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("Подготовка не может начаться после дня срока."), "{page}");
    let (_, _, page) = stack.post("/events", &[("title", "Зубной")]).await;
    assert!(page.contains("Выберите дату срока, а если нужно, и время."), "{page}");
    // So does Settings, for a webhook's address.
    let (status, _, page) =
        stack.post("/settings/webhooks", &[("url", "ftp://example.com/hado")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        page.contains("Укажите веб-адрес, начинающийся с https:// или http://.")
            && !page.contains("is not an absolute"),
        "{page}"
    );
    // An event that is not there is said in Russian too.
    let (status, page) = stack.get("/events/9999").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        page.contains("Этого события нет в вашем инбоксе.")
            && !page.contains("event 9999 not found"),
        "{page}"
    );
    // Programs keep the precise English, with the code.
    let refused = stack
        .client
        .post(format!("{}/me/events", stack.base))
        .header("content-type", "application/json")
        .header("sec-fetch-site", "same-origin")
        .body(r#"{"title": "Зубной", "due_at": "2026-12-20", "fire_at": "2026-12-25"}"#)
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = refused.json().await.unwrap();
    let violation = &body["violations"][0];
    assert_eq!(
        (violation["code"].as_str(), violation["message"].as_str()),
        (Some("FIRE_AFTER_DUE"), Some("fire_at 2026-12-25 is after the due day 2026-12-20")),
        "{body}"
    );
    stack.stop().await;
}

/// A whole group, and a search, show 500 events to a page, each page
/// linking to the next, with the same search and density: a page costs the
/// same however large the inbox.
async fn a_whole_group_is_shown_a_page_at_a_time(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let docs = stack.core.source_token("docs").await;
    let mut ingest = stack.core.ingest(&docs);
    for batch in 0..3 {
        let events = (batch * 400..(batch + 1) * 400)
            .take_while(|index| *index < 1_100)
            .map(|index| {
                source_event(
                    "anna",
                    &format!("far-{index}"),
                    &format!("Far {index:04}"),
                    &format!("2028-{:02}-{:02}", index / 28 % 12 + 1, index % 28 + 1),
                )
            })
            .collect();
        ingest.upsert_events(v1::UpsertEventsRequest { events }).await.unwrap();
    }
    let next_link = |page: &str| -> Option<String> {
        let at = page.find(">Show the next 500</a>")?;
        let start = page[..at].rfind("href=\"")? + 6;
        Some(page[start..at - 1].replace("&#38;", "&"))
    };

    let (_, first) = stack.get("/?all=scheduled").await;
    assert_eq!(first.matches(">Far ").count(), 500);
    let second_address = next_link(&first).expect("a link to the next page");
    assert!(
        second_address.starts_with("/?all=scheduled&after=")
            && second_address.ends_with("#scheduled"),
        "{second_address}"
    );
    let (_, second) = stack.get(&second_address).await;
    assert_eq!(second.matches(">Far ").count(), 500);
    let (_, third) = stack.get(&next_link(&second).expect("a third page")).await;
    assert_eq!(third.matches(">Far ").count(), 100, "the rest");
    assert!(next_link(&third).is_none(), "nothing follows the last page");
    let mut seen: Vec<&str> = [&first, &second, &third]
        .iter()
        .flat_map(|page| page.match_indices(">Far ").map(|(at, _)| &page[at + 1..at + 9]))
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 1_100, "every event once");

    // A search and the compact density go on to the next page.
    let (_, found) = stack.get("/?q=far&density=compact").await;
    assert_eq!(found.matches(">Far ").count(), 500);
    let next = next_link(&found).expect("a search's next page");
    assert!(next.starts_with("/?q=far&density=compact&all=scheduled&after="), "{next}");
    assert_eq!(stack.get(&next).await.1.matches(">Far ").count(), 500);

    let (status, _) = stack.get("/?all=scheduled&after=nonsense").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a cursor not from a page is refused");
    stack.stop().await;
}

/// What a week of use asked of the page, as a browser without JavaScript
/// meets it: quick add, dates typed as people write them and shown in the
/// page's language, a moment fixed elsewhere in both clocks, Delete in the
/// card's menu, and a whole 404 page in the person's language.
async fn the_inbox_round_two_without_javascript(backend: Backend) {
    let stack = Stack::start(&backend).await;
    // Quick add: one line fills the form, whose fields stay editable.
    let (status, page) = stack.get("/new?line=Passport+renewal+by+14+Mar%2C+start+1+Mar").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"<input name="title" value="Passport renewal""#)
            && page.contains(r#"<input name="due_date" value="14 Mar 2027""#)
            && page.contains(r#"<input name="fire_date" value="1 Mar 2027""#)
            && page.contains("Filled in from your line; check and save."),
        "{page}"
    );
    let read = stack
        .client
        .get(format!("{}/new/read?line=Call+mum+tomorrow+at+18:00", stack.base))
        .send()
        .await
        .unwrap();
    let read: serde_json::Value = read.json().await.unwrap();
    assert_eq!(
        read,
        serde_json::json!({"title": "Call mum", "due_date": "12 Dec 2026", "due_time": "18:00", "fire_date": ""})
    );
    let long = "x".repeat(201);
    let (status, _) = stack.get(&format!("/new/read?line={long}")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a line longer than a title");
    // Dates as people type them; an unreadable one is core's to refuse, by field.
    let (status, location, _) = stack
        .post(
            "/events",
            &[
                ("title", "Passport renewal"),
                ("due_date", "14 Mar 2027"),
                ("fire_date", "1.03.2027"),
                ("due_time", "3pm"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let passport = stack
        .core
        .inbox_as("anna")
        .get_event(v1::EventId { id: event_id(&location) })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (passport.due_at.as_str(), passport.fire_at.as_str()),
        ("2027-03-14T15:00", "2027-03-01")
    );
    let (status, _, page) =
        stack.post("/events", &[("title", "Nope"), ("due_date", "someday")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains(r#"value="someday""#) && page.contains("due-error"), "{page}");
    // A moment fixed in Tokyo reads in its own clock and in anna's (Berlin).
    let docs = stack.core.source_token("docs").await;
    let fields = v1::EventFields {
        title: "Tokyo call".into(),
        due_at: "2026-12-14T10:00+09:00".into(),
        ..Default::default()
    };
    let tokyo = stack.core.push(&docs, "anna", "tokyo", fields).await;
    let (_, page) = stack.get("/").await;
    assert!(page.contains("in 3 days, Mon 14 Dec 10:00 (+09:00) · 02:00 your time"), "{page}");
    // Delete is in the card's menu, naming the event; a source's event has none.
    let mine = event_id(&location);
    let (_, page) = stack.get("/?open=scheduled").await;
    assert!(
        page.contains(&format!(
            r#"<a class="delete" href="/events/{mine}/delete" aria-label="Delete: Passport renewal" data-confirm="Delete this event?" data-subject="Passport renewal""#
        )),
        "{page}"
    );
    assert!(!page.contains(&format!("/events/{tokyo}/delete")), "{page}");
    assert!(page.contains(r#"aria-label="More: Tokyo call">⋯</summary>"#), "{page}");
    // The webhook form leaves checking to the server, which answers in the person's words.
    let (_, settings) = stack.get("/settings").await;
    assert!(settings.contains(r#"class="add-webhook" novalidate>"#), "{settings}");
    // A page that is not there is a whole page in the person's language, with the way back.
    let not_found = || async {
        let url = format!("{}/no/such/page", stack.base);
        let response = stack.client.get(url).header("accept", "text/html").send().await.unwrap();
        (response.status(), response.text().await.unwrap())
    };
    let (status, page) = not_found().await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        page.contains("There is no page at this address.")
            && page.contains(r#"<a href="/">Back to the inbox</a>"#)
            && page.contains(r#"<nav>"#)
            && !page.contains("По этому адресу"),
        "{page}"
    );
    stack
        .core
        .inbox_as("anna")
        .update_profile(v1::UpdateProfileRequest {
            locale: Some("ru".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let (_, page) = not_found().await;
    assert!(
        page.contains("По этому адресу страницы нет.") && page.contains("Во входящие"),
        "{page}"
    );
    stack.stop().await;
}

/// Where a section of the page begins.
fn section_at(page: &str, state: &str) -> usize {
    page.find(&format!(r#"<section class="group-{state}" id="{state}">"#))
        .unwrap_or_else(|| panic!("no {state} section: {page}"))
}

/// The inbox leads with what is late, then today's, each group's heading
/// counting all of it (a folded or cut group too); the person's long
/// history of closed events is nowhere on the page; and what a form's
/// redirect says comes from its signed cookie, which a forged one cannot
/// imitate.
async fn the_inbox_leads_with_what_is_late_and_counts_each_group(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let docs = stack.core.source_token("docs").await;
    let mut events: Vec<v1::SourceEvent> = [
        ("bins", "Bins out", "2026-12-11"),
        ("tax", "Tax return", "2026-12-09"),
        ("call", "Call the bank", "2026-12-11T18:00"),
        ("lease", "Lease renewal", "2027-06-01"),
    ]
    .into_iter()
    .map(|(reference, title, due_at)| source_event("anna", reference, title, due_at))
    .collect();
    events.extend((0..30).map(|index| {
        source_event(
            "anna",
            &format!("soon-{index}"),
            "Soon",
            &format!("2026-12-{:02}", 13 + index % 15),
        )
    }));
    events.extend((0..200).map(|index| {
        let mut old = source_event("anna", &format!("old-{index}"), "Long gone", "2026-09-01");
        old.fields.as_mut().unwrap().after_due = Some("expire".into());
        old
    }));
    stack.core.ingest(&docs).upsert_events(v1::UpsertEventsRequest { events }).await.unwrap();

    let (status, page) = stack.get("/").await;
    assert_eq!(status, StatusCode::OK);
    let order: Vec<usize> =
        ["overdue", "today", "preparing", "scheduled"].map(|state| section_at(&page, state)).into();
    assert!(order.is_sorted(), "overdue, then today, preparing and scheduled: {order:?}");
    assert!(
        page.contains("<h2>Overdue <small>1</small></h2>")
            && page.contains("<h2>Today <small>2</small></h2>")
            && page.contains("<h2>Preparing <small>30</small></h2>")
            && page.contains("<h2>Scheduled <small>1</small></h2>"),
        "every group counted whole, though Preparing shows 25 and Scheduled is folded: {page}"
    );
    assert_eq!(page.matches(r#"<h3 class="title""#).count(), 1 + 2 + 25);
    assert!(!page.contains("Long gone"), "closed events stay in the archive");
    let (_, archive) = stack.get("/archive").await;
    assert_eq!(archive.matches("Long gone").count(), 100, "the archive's latest 100");
    // The state filter offers the groups in the same order.
    let offered: Vec<usize> = ["overdue", "today", "preparing", "scheduled"]
        .map(|state| page.find(&format!(r#"<option value="{state}""#)).expect(state))
        .into();
    assert!(offered.is_sorted(), "{offered:?}");

    // Done says the event's title from the redirect's cookie.
    let (_, page) = stack.get("/").await;
    let tax = page.split(r#"id="event-"#).nth(1).and_then(|rest| rest.split('"').next()).unwrap();
    let (_, location, _) = stack.post(&format!("/events/{tax}/done"), &[]).await;
    assert_eq!(stack.said(), Some(format!("done-{tax}")));
    let (_, page) = stack.get(&location).await;
    assert!(page.contains("Done: Tax return."), "{page}");

    // A cookie this gateway did not sign says nothing, and is forgotten.
    let title = "Your account is locked: call +1 555 0100";
    let encoded = {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(title)
    };
    for forged in [
        format!("done.{tax}..{encoded}.AAAA"),
        format!("done-{tax}"),
        "done.1..VGl0bGU.signature".to_owned(),
    ] {
        let response = stack
            .client
            .get(format!("{}/", stack.base))
            .header("cookie", format!("hado_said={forged}"))
            .send()
            .await
            .unwrap();
        let forgets = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .any(|value| value.to_str().unwrap().starts_with("hado_said=;"));
        let page = response.text().await.unwrap();
        assert!(
            !page.contains(r#"class="feedback""#) && !page.contains("locked"),
            "{forged}: {page}"
        );
        assert!(forgets, "{forged}: the page forgets it");
    }
    stack.stop().await;
}

/// The offer to set the time zone, as a page without JavaScript makes it
/// and as an attacker would use its form: it sits on every page while the
/// zone is the deployment's default; its answer comes back only to a page
/// of this site; a zone core does not know changes nothing; another site's
/// form is refused.
async fn the_time_zone_offer_answers_once_and_only_for_this_site(backend: Backend) {
    let stack = Stack::start_configured(&backend, "2026-12-11T09:00:00Z", |config| {
        config.default_zone = chrono_tz::UTC;
    })
    .await;
    for page in ["/", "/archive", "/new", "/settings"] {
        let (_, html) = stack.get(page).await;
        assert!(
            html.contains(r#"<form method="post" action="/settings/zone" data-zone="UTC""#),
            "{page}: {html}"
        );
        assert!(
            html.contains(&format!(r#"name="back" value="{page}""#)),
            "{page} comes back to itself"
        );
    }
    // Another site's form, a zone core does not know, and a way to another
    // site: none changes the zone or leaves this site.
    let response = stack
        .client
        .post(format!("{}/settings/zone", stack.base))
        .header("sec-fetch-site", "cross-site")
        .form(&[("tz", "Asia/Tokyo"), ("back", "/")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let (status, location, _) =
        stack.post("/settings/zone", &[("tz", "Mars/Olympus"), ("back", "/archive")]).await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/settings"));
    let profile = || async {
        stack
            .core
            .inbox_as("anna")
            .get_profile(v1::GetProfileRequest::default())
            .await
            .unwrap()
            .into_inner()
    };
    assert_eq!((profile().await.tz, profile().await.tz_is_default), ("UTC".into(), true));
    let (status, location, _) =
        stack.post("/settings/zone", &[("tz", "Asia/Tokyo"), ("back", "//evil.example/")]).await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/"));
    assert_eq!((profile().await.tz, profile().await.tz_is_default), ("Asia/Tokyo".into(), false));
    // Answered: no page offers it again.
    assert!(!stack.get("/").await.1.contains("/settings/zone"));
    stack.stop().await;
}

hado_testing::on_both_backends!(
    the_inbox_leads_with_what_is_late_and_counts_each_group,
    the_time_zone_offer_answers_once_and_only_for_this_site,
    the_inbox_round_two_without_javascript,
    a_whole_group_is_shown_a_page_at_a_time,
    the_web_inbox_works_without_javascript,
    refusals_speak_the_persons_language,
    pages_go_compressed_and_static_files_keep_a_year,
    the_inbox_and_archive_find_by_text_source_and_state,
    action_links_confirm_then_act_and_refuse_what_is_not_valid,
    reminders_go_to_a_webhook_set_up_in_settings,
);
