//! The calendar feed through the real stack, read by an independent RFC 5545
//! parser (PyPI's `icalendar`, through `tests/ics/parse.py`): the three kinds
//! of due moment, alarms on the fire day, stable UIDs, the right dates after
//! the person moves to another zone, ETag and If-None-Match, and revocation.

use crate::common;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use serde_json::{Value, json};

use common::Gateway;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore, source_event};

const PARSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ics/parse.py");

async fn parse(body: &str) -> Value {
    use tokio::io::AsyncWriteExt;
    let mut parser = tokio::process::Command::new("python3")
        .arg(PARSE)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    parser.stdin.take().unwrap().write_all(body.as_bytes()).await.unwrap();
    let output = parser.wait_with_output().await.unwrap();
    assert!(
        output.status.success(),
        "icalendar could not read the feed: {}\n{body}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn event<'a>(calendar: &'a Value, summary: &str) -> &'a Value {
    calendar["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|event| event["summary"] == summary)
        .unwrap_or_else(|| panic!("no {summary} in {calendar}"))
}

async fn the_calendar_feed_parses_and_follows_a_zone_change(backend: Backend) {
    let found = testing::runs("python3", &["-c", "import icalendar"]);
    if !testing::tool_available("the calendar feed check", found, "pip install icalendar") {
        return;
    }
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut config = common::config(&core);
    config.public_url = Some("https://hado.example.com".into());
    let gateway = Gateway::start(config).await;
    let mut anna = core.inbox_as("anna");
    for (title, due_at, fire_at) in [
        ("Visa", "2026-12-14", "2026-12-01"),
        ("Dentist", "2026-12-20T15:00", "2026-12-10"),
        ("Flight, Tokyo; window", "2027-01-05T10:00+09:00", "2026-12-29"),
    ] {
        let fields = v1::EventFields {
            title: title.into(),
            due_at: due_at.into(),
            fire_at: Some(fire_at.into()),
            ..Default::default()
        };
        anna.create_event(fields).await.unwrap();
    }
    let token =
        anna.issue_calendar_feed(v1::IssueCalendarFeedRequest {}).await.unwrap().into_inner().token;
    assert!(token.starts_with("hado_ics_"));
    let url = format!("{}/ics/{token}.ics", gateway.base);
    let client = reqwest::Client::new();

    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "text/calendar; charset=utf-8");
    let etag = response.headers()[ETAG].to_str().unwrap().to_owned();
    let body = response.text().await.unwrap();
    assert!(
        body.contains("\r\n") && body.lines().all(|line| line.trim_end_matches('\r').len() <= 75),
        "CRLF lines of at most 75 octets"
    );
    let berlin = parse(&body).await;
    assert_eq!(berlin["name"], "Hado · anna");
    let visa = event(&berlin, "Visa");
    assert_eq!((visa["kind"].as_str(), visa["start"].as_str()), (Some("date"), Some("2026-12-14")));
    assert_eq!(visa["alarms"], json!(["2026-12-01T08:00Z"]), "09:00 Berlin on the fire day");
    let dentist = event(&berlin, "Dentist");
    assert_eq!(
        (dentist["kind"].as_str(), dentist["start"].as_str()),
        (Some("floating"), Some("2026-12-20T15:00"))
    );
    let flight = event(&berlin, "Flight, Tokyo; window");
    assert_eq!(
        (flight["kind"].as_str(), flight["start"].as_str()),
        (Some("utc"), Some("2027-01-05T01:00"))
    );
    assert!(visa["uid"].as_str().unwrap().ends_with("@hado.example.com"));

    // Polling is cheap: the same feed answers 304.
    let again = client.get(&url).header(IF_NONE_MATCH, &etag).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert!(again.text().await.unwrap().is_empty());

    // Moving to Tokyo: dates and local times stay as given, the instant stays
    // the same instant, the alarms move to 09:00 Tokyo, the UIDs stay.
    anna.update_profile(v1::UpdateProfileRequest {
        tz: Some("Asia/Tokyo".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let response = client.get(&url).header(IF_NONE_MATCH, &etag).send().await.unwrap();
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "the feed changed, so the old ETag no longer matches"
    );
    let tokyo = parse(&response.text().await.unwrap()).await;
    assert_eq!(event(&tokyo, "Visa")["start"], "2026-12-14");
    assert_eq!(event(&tokyo, "Visa")["alarms"], json!(["2026-12-01T00:00Z"]));
    assert_eq!(event(&tokyo, "Dentist")["start"], "2026-12-20T15:00");
    assert_eq!(event(&tokyo, "Flight, Tokyo; window")["start"], "2027-01-05T01:00");
    for summary in ["Visa", "Dentist", "Flight, Tokyo; window"] {
        assert_eq!(event(&tokyo, summary)["uid"], event(&berlin, summary)["uid"], "stable UIDs");
    }

    // Done events leave the feed; a revoked or unknown feed is not found.
    let visa_id = anna
        .list_events(v1::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .events
        .iter()
        .find(|event| event.title == "Visa")
        .unwrap()
        .id;
    anna.mark_done(v1::EventId { id: visa_id }).await.unwrap();
    let after = parse(&client.get(&url).send().await.unwrap().text().await.unwrap()).await;
    assert_eq!(after["events"].as_array().unwrap().len(), 2);
    // A calendar larger than a page (core sends a thousand events at a
    // time) holds every event, each once.
    let docs = core.source_token("docs").await;
    let mut ingest = core.ingest(&docs);
    for batch in 0..5 {
        let events = (batch * 500..(batch + 1) * 500)
            .map(|index| {
                source_event(
                    "anna",
                    &format!("r{index}"),
                    &format!("Renewal {index}"),
                    &format!("2027-{:02}-{:02}", index % 12 + 1, index % 28 + 1),
                )
            })
            .collect();
        ingest.upsert_events(v1::UpsertEventsRequest { events }).await.unwrap();
    }
    let large = client.get(&url).send().await.unwrap().text().await.unwrap();
    let mut uids: Vec<&str> = large.lines().filter(|line| line.starts_with("UID:")).collect();
    uids.sort();
    uids.dedup();
    assert_eq!(uids.len(), 2_502);
    assert_eq!(parse(&large).await["events"].as_array().unwrap().len(), 2_502);
    anna.revoke_calendar_feed(v1::RevokeCalendarFeedRequest {}).await.unwrap();
    assert_eq!(client.get(&url).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let unknown = format!("{}/ics/hado_ics_{}.ics", gateway.base, "0".repeat(64));
    assert_eq!(client.get(&unknown).send().await.unwrap().status(), StatusCode::NOT_FOUND);

    gateway.stop().await;
    core.stop().await;
}

hado_testing::on_both_backends!(the_calendar_feed_parses_and_follows_a_zone_change);
