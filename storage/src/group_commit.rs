//! Owns group commit: calls that arrive together share one transaction.
//! Each call queues and waits; one task takes the calls waiting, applies
//! them together, in one commit or, where each call stands alone, as its
//! user sees fit (the work itself is its user's: [`Apply::apply`]), and
//! answers each call once what it wrote is committed. It
//! serves new events written one at a time (`storage::grouped`) and
//! sources' upserts (`engine::upsert_group`), with the same guards:
//!
//! - **Limits.** A group holds at most so many calls and so much weight
//!   (rows), so one transaction holds the writer about as long as one full
//!   batch; a call is never split, and one heavier than the limit goes
//!   alone.
//! - **Lanes take turns.** Calls of one lane (a source, a person) are
//!   applied in the order they came; lanes take turns when a group is
//!   formed, and the next group starts with the lane after the last one
//!   served, so one lane's flood of full batches puts at most one group
//!   ahead of another lane's call, not all of them.
//! - **Each lane has its own room.** At most [`Limits::per_lane`] calls of
//!   one lane wait at once; the next waits for its own lane's room, not in
//!   a queue shared with other lanes, so every call that waits is one the
//!   task can give its turn to, and a flood fills only its own lane.
//! - **A caller that has gone is not applied.** Its deadline passed and it
//!   was told its call failed: applying it now could undo what it did
//!   since (withdrawn the same key, say).
//! - **One bad call fails alone.** A group the database refuses is applied
//!   again a call at a time, until the database is found unreachable,
//!   which then answers every call left; a database that cannot be reached
//!   fails the whole group at once, without retrying each call into the
//!   same timeout. A call of a group whose others were committed without
//!   it, failed on its own ([`Apply::failed_alone`]), is applied again
//!   alone the same way.
//! - **A panic fails its group, not the task**: its transaction is rolled
//!   back as it is dropped, and the calls after it are served.
//!
//! Nothing is acknowledged before it is committed.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, mpsc, oneshot};

use super::StoreError;

/// What one kind of grouped call does: how a group is applied, and how
/// calls are weighed and sorted into lanes.
pub trait Apply: Send + Sync + 'static {
    type Call: Send + Sync + 'static;
    type Answer: Send + 'static;
    /// Applies the calls, in order, with one answer for each call, in the
    /// same order: in one commit, unless each call stands alone, when an
    /// answer may be its call's own failure ([`Apply::failed_alone`]). An
    /// error fails the group: nothing of it may have been committed.
    fn apply(
        &self,
        calls: &[Self::Call],
    ) -> impl Future<Output = Result<Vec<Self::Answer>, StoreError>> + Send;
    /// Whether `answer` is its call's own failure, the database not being
    /// away, in a group whose other calls were committed: the call is then
    /// applied again alone, as the calls of a group the database refused
    /// are. None by default.
    fn failed_alone(_answer: &Self::Answer) -> bool {
        false
    }
    /// What a call counts against [`Limits::weight`].
    fn weight(call: &Self::Call) -> usize;
    /// The lane a call waits in: a lane's calls keep their order.
    fn lane(call: &Self::Call) -> i64;
}

/// How much one group may hold and how many calls may wait.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Calls one group applies at most.
    pub calls: usize,
    /// Weight one group applies at most, unless one call alone is heavier.
    pub weight: usize,
    /// Calls of one lane that may wait at once; the next waits for room.
    pub per_lane: usize,
    /// What the calls are, for the log.
    pub what: &'static str,
}

type Reply<A> = oneshot::Sender<Result<A, StoreError>>;
type Waiting<P> = (<P as Apply>::Call, Reply<<P as Apply>::Answer>);

/// The queue in front of one grouping task.
pub struct GroupCommit<P: Apply> {
    /// Unbounded: what waits is bounded by the lanes' rooms.
    queue: mpsc::UnboundedSender<Waiting<P>>,
    rooms: Arc<Rooms>,
}

impl<P: Apply> Clone for GroupCommit<P> {
    fn clone(&self) -> Self {
        Self { queue: self.queue.clone(), rooms: self.rooms.clone() }
    }
}

/// Each lane's room: a lane's calls hold one of its permits from before
/// they queue until they are answered or their caller goes.
struct Rooms {
    per_lane: usize,
    lanes: Mutex<HashMap<i64, Arc<Semaphore>>>,
}

impl Rooms {
    /// Enters a lane's room, made when its first call comes.
    fn enter(self: &Arc<Self>, lane: i64) -> InRoom {
        let mut lanes = self.lanes.lock().expect("the rooms' lock is never poisoned");
        let room =
            lanes.entry(lane).or_insert_with(|| Arc::new(Semaphore::new(self.per_lane))).clone();
        InRoom { rooms: self.clone(), lane, room }
    }
}

/// A call's hold on its lane's room; leaving forgets the room once nobody
/// holds or waits for it, so that the map holds only lanes in use.
struct InRoom {
    rooms: Arc<Rooms>,
    lane: i64,
    room: Arc<Semaphore>,
}

impl Drop for InRoom {
    fn drop(&mut self) {
        let mut lanes = self.rooms.lanes.lock().expect("the rooms' lock is never poisoned");
        // The map's handle and this one, and every permit back.
        if Arc::strong_count(&self.room) == 2
            && self.room.available_permits() == self.rooms.per_lane
        {
            lanes.remove(&self.lane);
        }
    }
}

impl<P: Apply> std::fmt::Debug for GroupCommit<P> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("GroupCommit").finish_non_exhaustive()
    }
}

impl<P: Apply> GroupCommit<P> {
    /// Starts the grouping task; it ends when the last handle is dropped.
    pub fn start(applier: P, limits: Limits) -> Self {
        let (queue, incoming) = mpsc::unbounded_channel();
        tokio::spawn(run(applier, limits, incoming));
        let rooms = Rooms { per_lane: limits.per_lane, lanes: Mutex::default() };
        Self { queue, rooms: Arc::new(rooms) }
    }

    /// Applies one call with whatever else is waiting, and returns its
    /// answer once committed.
    pub async fn submit(&self, call: P::Call) -> Result<P::Answer, StoreError> {
        // Held until the answer comes or the caller goes; the permit is
        // given back before the room is left.
        let in_room = self.rooms.enter(P::lane(&call));
        let _permit = in_room.room.acquire().await.map_err(|_| StoreError::Closed)?;
        let (reply, answer) = oneshot::channel();
        self.queue.send((call, reply)).map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

async fn run<P: Apply>(
    applier: P,
    limits: Limits,
    mut incoming: mpsc::UnboundedReceiver<Waiting<P>>,
) {
    let mut lanes = Lanes::<P>::default();
    loop {
        if lanes.count == 0 {
            match incoming.recv().await {
                Some(call) => lanes.push(call),
                None => return,
            }
        }
        // Every call waiting joins its lane, so that its turn comes.
        while let Ok(call) = incoming.try_recv() {
            lanes.push(call);
        }
        let group = lanes.take(&limits);
        if !group.is_empty() {
            apply_group(&applier, &limits, group).await;
        }
    }
}

/// The calls taken off the queue, by lane, and the lanes' turns.
struct Lanes<P: Apply> {
    waiting: HashMap<i64, VecDeque<Waiting<P>>>,
    /// Lanes with calls waiting, the next to be served first.
    turns: VecDeque<i64>,
    count: usize,
}

impl<P: Apply> Default for Lanes<P> {
    fn default() -> Self {
        Self { waiting: HashMap::new(), turns: VecDeque::new(), count: 0 }
    }
}

impl<P: Apply> Lanes<P> {
    fn push(&mut self, call: Waiting<P>) {
        let lane = P::lane(&call.0);
        let waiting = self.waiting.entry(lane).or_default();
        if waiting.is_empty() {
            self.turns.push_back(lane);
        }
        waiting.push_back(call);
        self.count += 1;
    }

    /// The next group: one call from each lane in turn, round after round,
    /// while the limits allow. A lane whose next call does not fit gives no
    /// more calls to this group, so its calls keep their order. The next
    /// group starts with the lane after the last one that gave a call.
    fn take(&mut self, limits: &Limits) -> Vec<Waiting<P>> {
        let mut last = None;
        let (mut group, mut weight) = (Vec::new(), 0);
        let mut full = HashSet::new();
        'rounds: loop {
            let mut took = false;
            for lane in &self.turns {
                if full.contains(lane) {
                    continue;
                }
                let waiting = self.waiting.get_mut(lane).expect("a lane in turn has a queue");
                while waiting.front().is_some_and(|(_, reply)| reply.is_closed()) {
                    waiting.pop_front();
                    self.count -= 1;
                }
                let Some((call, _)) = waiting.front() else { continue };
                let heavy = P::weight(call);
                if !group.is_empty() && weight + heavy > limits.weight {
                    full.insert(*lane);
                    continue;
                }
                weight += heavy;
                last = Some(*lane);
                group.push(waiting.pop_front().expect("the front was just seen"));
                self.count -= 1;
                took = true;
                if group.len() == limits.calls {
                    break 'rounds;
                }
            }
            if !took {
                break;
            }
        }
        if let Some(place) = last.and_then(|last| self.turns.iter().position(|&lane| lane == last))
        {
            self.turns.rotate_left(place + 1);
        }
        let waiting = &mut self.waiting;
        self.turns.retain(|lane| waiting.get(lane).is_some_and(|calls| !calls.is_empty()));
        waiting.retain(|_, calls| !calls.is_empty());
        group
    }
}

/// Applies one group and answers its callers.
async fn apply_group<P: Apply>(applier: &P, limits: &Limits, group: Vec<Waiting<P>>) {
    let (calls, replies): (Vec<P::Call>, Vec<Reply<P::Answer>>) = group.into_iter().unzip();
    let error = match guarded(applier, limits, &calls).await {
        Ok(answers) => {
            let mut again = Vec::new();
            for ((call, reply), answer) in calls.iter().zip(replies).zip(answers) {
                if calls.len() > 1 && P::failed_alone(&answer) {
                    again.push((call, reply));
                } else {
                    let _ = reply.send(Ok(answer));
                }
            }
            each_alone(applier, limits, again).await;
            return;
        }
        Err(error) => error,
    };
    if calls.len() > 1 && error.for_another_caller().is_none() {
        // The database refused a statement: one call may be the cause, so
        // each is applied alone.
        each_alone(applier, limits, calls.iter().zip(replies)).await;
        return;
    }
    // One call, or a database that cannot be reached: every caller is
    // answered with the failure.
    let mut errors: Vec<StoreError> = (1..replies.len())
        .map(|_| error.for_another_caller().unwrap_or(StoreError::Closed))
        .collect();
    errors.push(error);
    for (reply, error) in replies.into_iter().zip(errors) {
        let _ = reply.send(Err(error));
    }
}

/// Applies each call alone, but one whose caller has gone, until the
/// database is found unavailable, which then answers every call left.
async fn each_alone<'c, P: Apply>(
    applier: &P,
    limits: &Limits,
    calls: impl IntoIterator<Item = (&'c P::Call, Reply<P::Answer>)>,
) {
    let mut away: Option<StoreError> = None;
    for (call, reply) in calls {
        if reply.is_closed() {
            continue;
        }
        let answer = match &away {
            Some(error) => Err(error.for_another_caller().unwrap_or(StoreError::Closed)),
            None => guarded(applier, limits, std::slice::from_ref(call))
                .await
                .map(|mut answers| answers.pop().expect("one answer for one call")),
        };
        if let Err(error) = &answer {
            away = away.or_else(|| error.for_another_caller());
        }
        let _ = reply.send(answer);
    }
}

/// [`Apply::apply`], with a panic inside it answered as a failure of this
/// group, and an answer for every call checked.
async fn guarded<P: Apply>(
    applier: &P,
    limits: &Limits,
    calls: &[P::Call],
) -> Result<Vec<P::Answer>, StoreError> {
    use futures::FutureExt;
    let answers = std::panic::AssertUnwindSafe(applier.apply(calls))
        .catch_unwind()
        .await
        .unwrap_or_else(|_| {
            tracing::error!(what = limits.what, "applying a group panicked; its callers are told");
            Err(StoreError::Failed(format!("applying {} failed inside core", limits.what)))
        })?;
    if answers.len() != calls.len() {
        return Err(StoreError::Corrupt(format!(
            "{} calls of {} were answered {} times",
            calls.len(),
            limits.what,
            answers.len()
        )));
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A call of the tests: its lane, its weight and its name.
    #[derive(Debug)]
    struct Named(i64, usize, &'static str);

    /// Records each group it applies. A group holding "panics" panics, one
    /// holding "refused" fails as a database refusing a row would, and
    /// otherwise one holding "away" as a database that cannot be reached.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<Vec<&'static str>>>>);

    impl Recorder {
        fn groups(&self) -> Vec<Vec<&'static str>> {
            self.0.lock().unwrap().clone()
        }
    }

    impl Apply for Recorder {
        type Call = Named;
        type Answer = &'static str;

        async fn apply(&self, calls: &[Named]) -> Result<Vec<&'static str>, StoreError> {
            let names: Vec<&'static str> = calls.iter().map(|call| call.2).collect();
            self.0.lock().unwrap().push(names.clone());
            if names.contains(&"panics") {
                panic!("a bug while applying");
            }
            if names.contains(&"refused") {
                return Err(StoreError::Corrupt("refused by the test".into()));
            }
            if names.contains(&"away") {
                return Err(StoreError::TimedOut);
            }
            Ok(names)
        }

        fn failed_alone(answer: &&'static str) -> bool {
            *answer == "fails-alone"
        }

        fn weight(call: &Named) -> usize {
            call.1
        }

        fn lane(call: &Named) -> i64 {
            call.0
        }
    }

    const SMALL: Limits = Limits { calls: 4, weight: 1000, per_lane: 64, what: "test calls" };

    type Answers = Vec<oneshot::Receiver<Result<&'static str, StoreError>>>;

    fn lanes(calls: Vec<Named>) -> (Lanes<Recorder>, Answers) {
        let mut lanes = Lanes::<Recorder>::default();
        let mut answers = Vec::new();
        for call in calls {
            let (reply, answer) = oneshot::channel();
            lanes.push((call, reply));
            answers.push(answer);
        }
        (lanes, answers)
    }

    fn names_of(group: &[Waiting<Recorder>]) -> Vec<&'static str> {
        group.iter().map(|(call, _)| call.2).collect()
    }

    #[test]
    fn lanes_take_turns_and_a_flood_of_full_batches_puts_one_group_ahead() {
        let (mut waiting, _answers) = lanes(vec![
            Named(1, 1000, "a1"),
            Named(1, 1000, "a2"),
            Named(1, 1000, "a3"),
            Named(2, 1, "b1"),
        ]);
        let mut taken = Vec::new();
        while waiting.count > 0 {
            taken.push(names_of(&waiting.take(&SMALL)));
        }
        assert_eq!(taken, [vec!["a1"], vec!["b1"], vec!["a2"], vec!["a3"]]);
        assert!(waiting.turns.is_empty() && waiting.waiting.is_empty());
    }

    #[test]
    fn a_group_takes_a_call_from_each_lane_in_turn_and_the_next_starts_with_the_next_lane() {
        let (mut waiting, _answers) = lanes(vec![
            Named(1, 1, "a1"),
            Named(1, 1, "a2"),
            Named(1, 1, "a3"),
            Named(2, 1, "b1"),
            Named(2, 1, "b2"),
            Named(2, 1, "b3"),
            Named(3, 1, "c1"),
        ]);
        assert_eq!(names_of(&waiting.take(&SMALL)), ["a1", "b1", "c1", "a2"]);
        assert_eq!(names_of(&waiting.take(&SMALL)), ["b2", "a3", "b3"]);
        assert_eq!(waiting.count, 0);
    }

    #[test]
    fn every_lane_gets_its_turn_before_any_lane_gets_a_second() {
        let names = ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1", "e2", "f1", "f2"];
        let calls = names.iter().enumerate().map(|(at, name)| Named(at as i64 / 2, 1, name));
        let (mut waiting, _answers) = lanes(calls.collect());
        assert_eq!(names_of(&waiting.take(&SMALL)), ["a1", "b1", "c1", "d1"]);
        assert_eq!(names_of(&waiting.take(&SMALL)), ["e1", "f1", "a2", "b2"]);
        assert_eq!(names_of(&waiting.take(&SMALL)), ["c2", "d2", "e2", "f2"]);
    }

    #[test]
    fn a_call_heavier_than_the_limit_goes_alone_and_a_lane_keeps_its_order() {
        let (mut waiting, _answers) =
            lanes(vec![Named(1, 5, "a1"), Named(1, 2000, "a2"), Named(1, 1, "a3")]);
        assert_eq!(names_of(&waiting.take(&SMALL)), ["a1"], "a3 does not pass a2");
        assert_eq!(names_of(&waiting.take(&SMALL)), ["a2"]);
        assert_eq!(names_of(&waiting.take(&SMALL)), ["a3"]);
    }

    #[test]
    fn a_call_whose_caller_has_gone_is_not_taken() {
        let (mut waiting, mut answers) =
            lanes(vec![Named(1, 1, "a1"), Named(1, 1, "gone"), Named(1, 1, "a3")]);
        drop(answers.remove(1));
        assert_eq!(names_of(&waiting.take(&SMALL)), ["a1", "a3"]);
        assert_eq!(waiting.count, 0);
    }

    /// Submits every call at once, so that they wait together for the task
    /// (these tests run on one thread), and returns each call's answer.
    async fn submit_together(
        recorder: &Recorder,
        calls: Vec<Named>,
    ) -> Vec<Result<&'static str, StoreError>> {
        let groups = GroupCommit::start(recorder.clone(), SMALL);
        futures::future::join_all(calls.into_iter().map(|call| groups.submit(call))).await
    }

    #[tokio::test]
    async fn a_call_failed_alone_in_a_committed_group_is_applied_again_alone() {
        let recorder = Recorder::default();
        let calls = vec![Named(1, 1, "a1"), Named(2, 1, "fails-alone"), Named(3, 1, "c1")];
        let answers = submit_together(&recorder, calls).await;
        let answers: Vec<&str> = answers.into_iter().map(Result::unwrap).collect();
        assert_eq!(answers, ["a1", "fails-alone", "c1"]);
        assert_eq!(recorder.groups(), [vec!["a1", "fails-alone", "c1"], vec!["fails-alone"]]);
    }

    #[tokio::test]
    async fn a_refused_group_is_applied_again_a_call_at_a_time() {
        let recorder = Recorder::default();
        let answers = submit_together(
            &recorder,
            vec![Named(1, 1, "a1"), Named(2, 1, "refused"), Named(3, 1, "c1")],
        )
        .await;
        assert_eq!(answers[0].as_ref().unwrap(), &"a1");
        assert!(matches!(answers[1], Err(StoreError::Corrupt(_))), "{:?}", answers[1]);
        assert_eq!(answers[2].as_ref().unwrap(), &"c1");
        assert_eq!(
            recorder.groups(),
            [vec!["a1", "refused", "c1"], vec!["a1"], vec!["refused"], vec!["c1"]]
        );
    }

    #[tokio::test]
    async fn an_unreachable_database_fails_the_whole_group_without_retries() {
        let recorder = Recorder::default();
        let answers = submit_together(
            &recorder,
            vec![Named(1, 1, "a1"), Named(2, 1, "away"), Named(3, 1, "c1")],
        )
        .await;
        for answer in &answers {
            assert!(matches!(answer, Err(StoreError::TimedOut)), "{answer:?}");
        }
        assert_eq!(recorder.groups(), [vec!["a1", "away", "c1"]]);
    }

    #[tokio::test]
    async fn retries_alone_stop_at_the_first_unreachable_database() {
        let recorder = Recorder::default();
        let answers = submit_together(
            &recorder,
            vec![Named(1, 1, "refused"), Named(2, 1, "away"), Named(3, 1, "c1")],
        )
        .await;
        assert!(matches!(answers[0], Err(StoreError::Corrupt(_))));
        assert!(matches!(answers[1], Err(StoreError::TimedOut)));
        assert!(matches!(answers[2], Err(StoreError::TimedOut)), "c1 was not tried into it");
        assert_eq!(
            recorder.groups(),
            [vec!["refused", "away", "c1"], vec!["refused"], vec!["away"]]
        );
    }

    #[tokio::test]
    async fn a_lane_past_its_room_waits_alone_and_its_room_is_forgotten_when_empty() {
        let recorder = Recorder::default();
        let groups = GroupCommit::start(recorder.clone(), Limits { per_lane: 2, ..SMALL });
        let calls = [Named(1, 1, "a1"), Named(1, 1, "a2"), Named(1, 1, "a3"), Named(2, 1, "b1")];
        let answers = futures::future::join_all(calls.map(|call| groups.submit(call))).await;
        assert!(answers.iter().all(Result::is_ok));
        assert_eq!(recorder.groups(), [vec!["a1", "b1", "a2"], vec!["a3"]]);
        assert!(groups.rooms.lanes.lock().unwrap().is_empty(), "rooms in use only");
    }

    #[tokio::test]
    async fn a_panic_fails_its_group_and_the_task_serves_the_next() {
        let recorder = Recorder::default();
        let groups = GroupCommit::start(recorder.clone(), SMALL);
        let failed = groups.submit(Named(1, 1, "panics")).await;
        assert!(matches!(&failed, Err(StoreError::Failed(words)) if words.contains("test calls")));
        assert_eq!(groups.submit(Named(1, 1, "after")).await.unwrap(), "after");
    }
}
