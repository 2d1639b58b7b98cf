/* The replication protocol of docs/REPLICATION.md as a Promela model, checked exhaustively by spin
   (scripts/model_check.sh). Default: failover (a leader that may be paused at any point and resumed,
   a standby that recovers with same_identity => true and leads on, a follower). -DSHARED: two
   WRITERS 'shared' hosts publishing through one head, and a follower of snapshots. -DLEASE: failover
   with the lease of SET differential_failover = 'lease': the leader renews it by If-Match between
   commits and stops at a refused renewal; the standby first takes it by If-Match on the version it
   saw (at any moment: a lapse judged on any clock), then recovers; lease requests go through the
   same lossy network.
   -DMUTANT_* removes one guard; model_check.sh requires spin to find an error for every mutant. */

/* ------------------------------------------------------------------ the network and the store */

/* Requests go through one slot per sending process; the Net process delivers each one later (any
   interleaving: a process may be paused anywhere), or loses it. Either way the response can be lost
   too, and a sender may stop waiting (time out) while its request is still in flight: it then does
   not know whether the request landed, and may only learn it by a GET. A sender's next request
   waits until the previous one is delivered or lost. That loses no behaviour: a sender's next
   request to the same key carries the same bytes or more (its first bytes the same), so of two in
   flight, whichever lands first leaves a state this model reaches by delivering the older one (or
   losing it) just before the newer one is sent; the sender decides nothing in between. */
#define RQ_NONE  0
#define RQ_EPOCH 1   /* PUT epochs/<db>/<branch>/<chain>/<seq>, If-None-Match: * (create-only) */
#define RQ_HEAD  2   /* PUT heads/<db>/<branch>, If-Match: <the ETag the sender read> */
#define RQ_LEASE 3   /* PUT leases/<db>/<branch>, If-Match: <the ETag the sender saw> (new holder in a) */

#define R_PENDING 0
#define R_OK      1
#define R_412     2  /* precondition failed */
#define R_UNKNOWN 3  /* request lost, response lost or timed out: the sender does not know */
#define R_GONE    4  /* the sender stopped waiting: nobody reads this response */

byte rq_kind[2], rq_a[2], rq_b[2], rq_v[2];   /* kind; (chain, seq) or (new head value, ETag); value */
byte resp[2];
hidden byte result;

/* Faults are bounded so that the search stays exhaustive within CI's time: at most MAXLOSS lost
   requests, lost responses or timeouts in one run (any of them, anywhere). */
#ifndef MAXLOSS
#define MAXLOSS 2
#endif
byte losses;

inline send(p, kind, a, b, v) {
  atomic {
    rq_kind[p] == RQ_NONE ->   /* the previous request of p is delivered or lost */
    rq_kind[p] = kind; rq_a[p] = a; rq_b[p] = b; rq_v[p] = v; resp[p] = R_PENDING
  }
}

inline await(p, r) {
  if
  :: atomic { resp[p] != R_PENDING -> r = resp[p]; resp[p] = R_PENDING }
  :: atomic {                                    /* timeout; the request may still land later */
       rq_kind[p] != RQ_NONE && losses < MAXLOSS -> losses++; resp[p] = R_GONE; r = R_UNKNOWN
     }
  fi
}

#ifndef SHARED
/* ================================================================ failover configuration */

#define NC 3                 /* chains 0..2 */
#define NS 3                 /* seqs 1..3 per chain */
#define KEY(c, s) ((c) * (NS + 1) + (s))

/* An epoch object's value: 0 absent; 1..63 a commit epoch, bit i = commit i carried in its WAL
   bytes (bits 0 and 1: the leader's two commits, bit 2: the new leader's commit); SEAL + writer:
   a seal (writer 1 = the leader's own, reason checkpoint; writer 2 = the standby's, reason recovery). */
#define ABSENT 0
#define SEAL 128
#define IS_SEAL(v) ((v) >= SEAL)
#define WL 1                 /* writer ids in seals */
#define WS 2
#define PL 0                 /* request slots */
#define PS 1
#define L_CIDS 3             /* the leader's commits */
#define S_CID 4              /* the new leader's commit */

byte obj[NC * (NS + 1)];     /* epochs/<db>/<branch>/<chain>/<seq> */
byte base_k[NC];             /* chain c > 0 starts from the state (c - 1, base_k[c]), named by the seal */
byte head_c = 0;             /* heads/<db>/<branch>: "chain <n>" ... */
byte head_v = 1;             /* ... and its ETag (a version counter) */

/* ghosts: what the properties read; no process decides anything on them */
byte acked;                  /* commits whose COMMIT returned success to its client */
byte fence_c = 255;          /* where the recovery seal landed */
byte fence_s;
bool done_l, done_s;
bool fenced_l;               /* the old leader got head_conflict */
byte flist[3];               /* the follower's newest opened state: its commits, in order */
byte flen;
#ifdef LEASE
byte lease_h = WL;           /* leases/<db>/<branch>: its holder (the leader created it) ... */
byte lease_v = 1;            /* ... and its ETag */
bool lease_taken;            /* ghost: the standby holds the lease */
bool lease_lost_l;           /* ghost: the old leader stopped at a refused renewal (not at the seal) */
#ifndef MAXRENEW
#define MAXRENEW 2
#endif
#endif

/* scratch of the d_steps below (not part of the state) */
hidden byte hj, hs, hupto, hv, hb, hlen, hmask, wc, wk;
hidden byte hout[3];

/* The commits of state (c, k), in order: the base chain by chain, then epochs 1..k. */
inline hist(c, k) {
  hj = 0; hlen = 0; hmask = 0;
  do
  :: hj <= c ->
     hupto = (hj < c -> base_k[hj + 1] : k);
     hs = 1;
     do
     :: hs <= hupto ->
        hv = obj[KEY(hj, hs)];
        if
        :: hv != ABSENT && !IS_SEAL(hv) ->
           hb = 0;
           do
           :: hb < 3 ->
              if
              :: (hv & (1 << hb)) && !(hmask & (1 << hb)) ->
                 hout[hlen] = hb; hlen++; hmask = hmask | (1 << hb)
              :: else -> skip
              fi;
              hb++
           :: else -> break
           od
        :: else -> skip
        fi;
        hs++
     :: else -> break
     od;
     hj++
  :: else -> break
  od
}

/* Walk from the head to the tip (wc, wk), following seals: what a reader or a recovery finds. */
inline walk_from_head() {
  wc = head_c; wk = 0;
  do
  :: wk < NS && obj[KEY(wc, wk + 1)] != ABSENT && !IS_SEAL(obj[KEY(wc, wk + 1)]) -> wk++
  :: wk < NS && IS_SEAL(obj[KEY(wc, wk + 1)]) && wc + 1 < NC -> wc++; wk = 0
  :: else -> break
  od
}

/* A request reaches the store: create-only epochs, If-Match heads, each one atomic. */
inline apply(p) {
  if
  :: rq_kind[p] == RQ_EPOCH ->
     if
#ifdef MUTANT_UNCONDITIONAL_EPOCH_PUT
     :: true ->              /* the guard removed: the epoch PUT overwrites */
#else
     :: obj[KEY(rq_a[p], rq_b[p])] == ABSENT ->
#endif
        /* Property 2 (no fork): never two different objects at one (chain, seq). */
        assert(obj[KEY(rq_a[p], rq_b[p])] == ABSENT || obj[KEY(rq_a[p], rq_b[p])] == rq_v[p]);
        obj[KEY(rq_a[p], rq_b[p])] = rq_v[p];
        result = R_OK;
        if
        :: IS_SEAL(rq_v[p]) ->
           base_k[rq_a[p] + 1] = rq_b[p] - 1;
           if
           :: rq_v[p] == SEAL + WS ->
              fence_c = rq_a[p]; fence_s = rq_b[p];
              /* Property 1: the recovered state (everything before the seal) holds every
                 acknowledged commit. */
              hist(rq_a[p], rq_b[p] - 1);
              assert((acked & ~hmask) == 0)
           :: else -> skip
           fi
        :: else -> skip
        fi
     :: else -> result = R_412
     fi
  :: rq_kind[p] == RQ_HEAD ->
     if
#ifdef MUTANT_UNCONDITIONAL_HEAD_PUT
     :: true ->              /* without If-Match: the head may even move backward */
#else
     :: head_v == rq_b[p] ->
#endif
        head_c = rq_a[p]; head_v++; result = R_OK
     :: else -> result = R_412
     fi
#ifdef LEASE
  :: rq_kind[p] == RQ_LEASE ->
     if
#ifdef MUTANT_LEASE_NO_IF_MATCH
     :: true ->              /* the lease taken or renewed whatever version it has */
#else
     :: lease_v == rq_b[p] ->
#endif
        lease_h = rq_a[p]; lease_v++; result = R_OK
     :: else -> result = R_412
     fi
#endif
  fi
}

/* Move the head forward to chain c by If-Match; on doubt re-read it; never move it backward. */
inline move_head(p, c, etag, r, hc) {
  do
  :: send(p, RQ_HEAD, c, etag, 0);
     await(p, r);
     if
     :: r == R_OK -> r = 0; break
     :: else ->
        r = 0;
        atomic { hc = head_c; etag = head_v };   /* GET head */
        if
        :: hc >= c -> hc = 0; break   /* ours landed, or someone is as far or further */
        :: else -> hc = 0    /* retry from the ETag just read */
        fi
     fi
  od
}

/* The old leader: SHIP_WAL 'sync', two commits, maybe one checkpoint (a new chain). Arbitrary
   interleaving pauses it anywhere, e.g. between its local commit and its PUT, for a whole takeover. */
proctype Leader() {
  byte c = 0, k = 0, etag = 1;   /* its chain, last shipped seq there, the head ETag it knows */
  byte n = 0;                    /* local commits made */
  byte pend = 0;                 /* local commits not in a confirmed epoch yet */
  byte waiting = 0;              /* the commit whose client waits for COMMIT to return */
  byte r, v, hc;
#ifdef LEASE
  bool rolled = true;            /* new chains are checked by the run without the lease */
  byte lv = 1, renewals = 0;     /* the lease ETag it knows; renewals made */
#else
  bool rolled = false;
#endif

  do
  :: n < 2 ->
     pend = pend | (1 << n); waiting = 1 << n; n++;   /* local commit: the WAL is durable */
#ifdef MUTANT_ACK_BEFORE_PUT
     acked = acked | waiting;                         /* the guard removed: ack, then ship */
#endif
ship:
     r = 0; v = 0;                                    /* dead values out of the state vector */
     assert(k < NS);
     send(PL, RQ_EPOCH, c, k + 1, pend);              /* all bytes since the last shipped epoch */
     await(PL, r);
     if
#ifdef MUTANT_TRUST_UNKNOWN
     :: r == R_OK || r == R_UNKNOWN ->                /* the guard removed: a lost response is success */
#else
     :: r == R_OK ->
#endif
        k++;
        d_step {
          /* Property 2: a fenced writer never gets an epoch acknowledged after the seal. */
          assert(fence_c == 255 || c < fence_c || (c == fence_c && k < fence_s));
          acked = acked | waiting
        };
        waiting = 0; pend = 0
     :: else ->
        v = obj[KEY(c, k + 1)];                       /* GET (c, k + 1): did it land? */
        if
        :: v == ABSENT ->
           if
           :: goto ship                               /* retry the same bytes */
           :: waiting = 0                             /* give up: COMMIT fails, nothing acked; the
                                                         bytes ship with the next epoch */
           fi
        :: v != ABSENT && !IS_SEAL(v) && (v & ~L_CIDS) == 0 ->
           k++;                                       /* an earlier PUT of ours landed */
#ifdef MUTANT_ACK_WHOLE_BATCH
           acked = acked | waiting; waiting = 0; pend = 0   /* the guard removed: assume ALL of pend */
#else
           d_step {
             assert(fence_c == 255 || c < fence_c || (c == fence_c && k < fence_s));
             acked = acked | (waiting & v)
           };
           waiting = waiting & ~v; pend = pend & ~v;
           if
           :: pend != 0 -> goto ship                  /* it held only a prefix: ship the rest */
           :: else -> skip
           fi
#endif
        :: IS_SEAL(v) && v != SEAL + WL -> goto fenced    /* [differential:head_conflict] */
        :: else -> assert(false)                      /* another writer's commit in our chain */
        fi
     fi
  :: !rolled && pend == 0 && c + 1 < NC ->
     /* checkpoint: export the base, seal (c, k + 1) naming chain c + 1, then move the head */
     rolled = true;
seal:
     r = 0; v = 0;
     assert(k < NS);
     send(PL, RQ_EPOCH, c, k + 1, SEAL + WL);
     await(PL, r);
     if
     :: r == R_OK -> skip
     :: else ->
        v = obj[KEY(c, k + 1)];
        if
        :: v == SEAL + WL -> skip
        :: v == ABSENT -> goto seal
        :: IS_SEAL(v) && v != SEAL + WL -> goto fenced
        :: else -> assert(false)
        fi
     fi;
     c++; k = 0; r = 0; v = 0;
     move_head(PL, c, etag, r, hc)
#ifdef LEASE
  :: renewals < MAXRENEW ->
     /* the lease keeper renews (a thread of its own; here between two steps of the leader) */
     renewals++;
     r = 0;
     send(PL, RQ_LEASE, WL, lv, 0);
     await(PL, r);
     if
     :: r == R_OK -> lv++
     :: else ->
        atomic { v = lease_h; lv = lease_v };        /* GET the lease */
        if
        :: v == WL -> skip                           /* ours (an earlier renewal landed, or none) */
        :: else -> v = 0; r = 0; lease_lost_l = true; goto fenced   /* taken: stop shipping */
        fi
     fi;
     r = 0; v = 0
#endif
  :: n == 2 -> break
  od;
  done_l = true;
  goto out;
fenced:
  fenced_l = true;
  done_l = true;
out:
  skip
}

/* The standby: differential_recover_branch(head, name, same_identity => true), then it leads on:
   a new chain and one sync commit. When it starts is free (a lease, a human): safety does not
   depend on it, so the model lets it start at any point. */
proctype Standby() {
  byte c, k = 0, etag, r, v, hc, pend;
#ifdef LEASE
  byte sv;
take:
  /* The version it saw unchanged for a lease duration on its own clock. No clock is trusted, so
     "lapsed" may be judged at any moment, even while the leader is alive (a superset of what the
     code allows). It takes exactly that version, by If-Match. */
  r = 0;
  sv = lease_v;                               /* GET lease */
  send(PS, RQ_LEASE, WS, sv, 0);
  await(PS, r);
  if
  :: r == R_OK -> skip
  :: else ->
     if
     :: lease_h == WS -> skip                 /* GET: ours landed */
     :: else -> goto take                     /* renewed meanwhile: watch again */
     fi
  fi;
  r = 0; sv = 0; lease_taken = true;
#endif

  atomic { c = head_c; etag = head_v };       /* GET head */
walk:
  do                                          /* to the tip, following seals */
  :: assert(k < NS);
     v = obj[KEY(c, k + 1)];
     if
     :: v == ABSENT -> break
     :: IS_SEAL(v) -> c++; k = 0
     :: else -> k++
     fi;
     v = ABSENT
  od;
#if defined(MUTANT_NO_SEAL) || defined(MUTANT_LEASE_NO_SEAL)
  base_k[c + 1] = k;                          /* the guard removed: start the new chain unsealed (with
                                                 the lease: trust the lease as the fence) */
#else
seal:                                         /* the fence: a create-only seal at (c, k + 1) */
  r = 0; v = 0;
  send(PS, RQ_EPOCH, c, k + 1, SEAL + WS);
  await(PS, r);
  if
  :: r == R_OK -> skip
  :: else ->
     v = obj[KEY(c, k + 1)];
     if
     :: v == SEAL + WS -> skip                /* ours landed */
     :: v == ABSENT -> goto seal
     :: else -> goto walk                     /* the leader appended: apply it, seal the new tip */
     fi
  fi;
#endif
  c++; k = 0; r = 0; v = 0;
  move_head(PS, c, etag, r, hc);
  pend = S_CID;                               /* one commit as the new leader, sync */
sship:
  r = 0; v = 0;
  send(PS, RQ_EPOCH, c, 1, pend);
  await(PS, r);
  if
  :: r == R_OK -> acked = acked | S_CID
  :: else ->
     v = obj[KEY(c, 1)];
     if
     :: v == S_CID -> acked = acked | S_CID
     :: v == ABSENT -> goto sship
     :: else -> skip                          /* someone else wrote our chain: the checks catch it */
     fi
  fi;
  done_s = true
}

/* A follower: attach the head, then one GET of (c, k + 1) per interval; a seal moves it to the
   next chain, whose base is the state it already has. */
proctype Follower() {
  byte c, k = 0, v;

  d_step { c = head_c; hist(c, 0); flen = hlen; flist[0] = hout[0]; flist[1] = hout[1]; flist[2] = hout[2] };
  do
  :: k < NS ->
     v = obj[KEY(c, k + 1)];
     if
     :: v == ABSENT ->
        if
        :: done_l && done_s -> break
        :: else -> skip                       /* 404: nothing new this interval */
#ifdef MUTANT_FOLLOWER_JUMPS
        :: head_c > c -> c = head_c; k = 0    /* the guard removed: jump to the head's newer chain
                                                 instead of reading on to the seal */
#endif
        fi
     :: IS_SEAL(v) && c + 1 < NC -> c++; k = 0
     :: IS_SEAL(v) && c + 1 >= NC -> break
     :: !IS_SEAL(v) && v != ABSENT ->         /* open state (c, k + 1) */
        k++;
        d_step {
          hb = 0;
          do
          :: hb < 3 ->
             if
             :: (v & (1 << hb)) && flen < 3 -> flist[flen] = hb; flen++
             :: else -> skip
             fi;
             hb++
          :: else -> break
          od
        }
     fi;
     v = ABSENT
  :: k >= NS -> break
  od
}

proctype Net() {
  do
  :: atomic {
       rq_kind[PL] != RQ_NONE ->
       if
       :: apply(PL);
          if
          :: resp[PL] == R_GONE -> resp[PL] = R_PENDING
          :: resp[PL] != R_GONE -> resp[PL] = result
          :: resp[PL] != R_GONE && losses < MAXLOSS -> losses++; resp[PL] = R_UNKNOWN   /* response lost */
          fi
       :: resp[PL] == R_GONE -> resp[PL] = R_PENDING                           /* lost, unheard */
       :: resp[PL] != R_GONE && losses < MAXLOSS -> losses++; resp[PL] = R_UNKNOWN   /* request lost */                                             /* request lost */
       fi;
       rq_kind[PL] = RQ_NONE; rq_a[PL] = 0; rq_b[PL] = 0; rq_v[PL] = 0; result = 0
     }
  :: atomic {
       rq_kind[PS] != RQ_NONE ->
       if
       :: apply(PS);
          if
          :: resp[PS] == R_GONE -> resp[PS] = R_PENDING
          :: resp[PS] != R_GONE -> resp[PS] = result
          :: resp[PS] != R_GONE && losses < MAXLOSS -> losses++; resp[PS] = R_UNKNOWN   /* response lost */
          fi
       :: resp[PS] == R_GONE -> resp[PS] = R_PENDING                           /* lost, unheard */
       :: resp[PS] != R_GONE && losses < MAXLOSS -> losses++; resp[PS] = R_UNKNOWN   /* request lost */
       fi;
       rq_kind[PS] = RQ_NONE; rq_a[PS] = 0; rq_b[PS] = 0; rq_v[PS] = 0; result = 0
     }
  :: done_l && done_s && rq_kind[PL] == RQ_NONE && rq_kind[PS] == RQ_NONE -> break
  od
}

init {
  atomic { run Net(); run Leader(); run Standby(); run Follower() };
  _nr_pr == 1;
  d_step {
    walk_from_head();
    hist(wc, wk);
    /* Property 1: every acknowledged commit is in the history reachable from the head. */
    assert((acked & ~hmask) == 0);
    /* Property 3: the follower's newest state (and so every one it opened) is a prefix of it. */
    assert(flen <= hlen);
    hb = 0;
    do
    :: hb < flen -> assert(flist[hb] == hout[hb]); hb++
    :: else -> break
    od;
    /* Witnesses (expected to fail): the scenarios the properties are about do occur. */
#ifdef WITNESS_TAKEOVER
    /* the old leader fenced, commits of both leaders acknowledged, the follower on the new one's */
    assert(!(fenced_l && (acked & L_CIDS) && (acked & S_CID) && flen >= 2 && flist[flen - 1] == 2))
#endif
#ifdef WITNESS_LEASE
    /* the standby took the lease, the old leader (paused: it never saw the lease lost) was fenced
       by the recovery seal, and both leaders' commits were acknowledged */
    assert(!(lease_taken && fenced_l && !lease_lost_l && (acked & L_CIDS) && (acked & S_CID)))
#endif
#ifdef WITNESS_FAULTS
    /* every commit acknowledged although MAXLOSS requests, responses or waits were lost */
    assert(!(losses == MAXLOSS && acked == 7))
#endif
  }
}

#else
/* ================================================================ shared writers (WRITERS 'shared') */

/* Snapshots: 0 the one both start from; writer w's i-th is 1 + 2w + i. The head holds a snapshot and
   an ETag; each snapshot's commit record (create-only) names its parent, the head it was built on. */
#define NSNAP 5

byte head_s = 0;
byte head_v = 1;
byte parent[NSNAP];
bool published[NSNAP];       /* the writer was told: published (on main in S3) */
bool kept[NSNAP];            /* the writer was told: [differential:branch_conflict], kept as a snapshot */
byte fseen;                  /* follower: the snapshots it opened (a bit each) */
byte wdone;                  /* writers finished */
hidden byte x, anc;

/* anc = the ancestors of s, s included, as a bit mask */
inline ancestry(s) {
  x = s; anc = 1;
  do
  :: x != 0 -> anc = anc | (1 << x); x = parent[x]
  :: else -> break
  od
}

inline apply(p) {
  assert(rq_kind[p] == RQ_HEAD);
  if
#ifdef MUTANT_UNCONDITIONAL_HEAD_PUT
  :: true ->                 /* the guard removed: the head PUT ignores If-Match */
#else
  :: head_v == rq_b[p] ->
#endif
     head_s = rq_a[p]; head_v++; result = R_OK
  :: else -> result = R_412
  fi
}

proctype Writer(byte w) {
  byte base, etag, snap, i = 0, r, hs, hv;
  bool mine;

  atomic { base = head_s; etag = head_v };    /* the head this repository last saw */
  do
  :: i < 2 ->
     snap = 1 + 2 * w + i; i++;
     parent[snap] = base;                     /* local work; its commit record names the parent */
pub:
     send(w, RQ_HEAD, snap, etag, 0);         /* publish: If-Match the head we started from */
     await(w, r);
     if
     :: r == R_OK -> published[snap] = true; base = snap; etag++
     :: else ->
        d_step {                              /* GET head, then the commit records it reaches */
          hs = head_s; hv = head_v;
          ancestry(hs);
#ifdef MUTANT_PUBLISHED_MEANS_HEAD
          mine = (hs == snap);                /* the guard removed: only "the head is ours" counts */
#else
          mine = ((anc & (1 << snap)) != 0);  /* ours landed, maybe already built upon */
#endif
          x = 0; anc = 0
        };
        if
        :: mine -> published[snap] = true; base = hs; etag = hv
        :: !mine && hv == etag -> goto pub    /* unchanged: ours did not land yet, retry */
        :: else ->                            /* moved by another writer: our If-Match can never
                                                 land now; keep the work, main follows S3 */
           kept[snap] = true; base = hs; etag = hv
        fi
     fi
  :: i == 2 -> break
  od;
  wdone++
}

/* Follows snapshots: a conditional GET of the head (If-None-Match on its ETag) per interval. */
proctype SnapFollower() {
  byte seen_v = 0;
  do
  :: atomic { head_v != seen_v -> seen_v = head_v; fseen = fseen | (1 << head_s) }
  :: wdone == 2 -> break
  od
}

proctype Net() {
  do
  :: atomic {
       rq_kind[0] != RQ_NONE ->
       if
       :: apply(0);
          if
          :: resp[0] == R_GONE -> resp[0] = R_PENDING
          :: resp[0] != R_GONE -> resp[0] = result
          :: resp[0] != R_GONE && losses < MAXLOSS -> losses++; resp[0] = R_UNKNOWN   /* response lost */
          fi
       :: resp[0] == R_GONE -> resp[0] = R_PENDING                           /* lost, unheard */
       :: resp[0] != R_GONE && losses < MAXLOSS -> losses++; resp[0] = R_UNKNOWN   /* request lost */
       fi;
       rq_kind[0] = RQ_NONE; rq_a[0] = 0; rq_b[0] = 0; rq_v[0] = 0; result = 0
     }
  :: atomic {
       rq_kind[1] != RQ_NONE ->
       if
       :: apply(1);
          if
          :: resp[1] == R_GONE -> resp[1] = R_PENDING
          :: resp[1] != R_GONE -> resp[1] = result
          :: resp[1] != R_GONE && losses < MAXLOSS -> losses++; resp[1] = R_UNKNOWN   /* response lost */
          fi
       :: resp[1] == R_GONE -> resp[1] = R_PENDING                           /* lost, unheard */
       :: resp[1] != R_GONE && losses < MAXLOSS -> losses++; resp[1] = R_UNKNOWN   /* request lost */
       fi;
       rq_kind[1] = RQ_NONE; rq_a[1] = 0; rq_b[1] = 0; rq_v[1] = 0; result = 0
     }
  :: wdone == 2 && rq_kind[0] == RQ_NONE && rq_kind[1] == RQ_NONE -> break
  od
}

init {
  atomic { run Net(); run Writer(0); run Writer(1); run SnapFollower() };
  _nr_pr == 1;
  d_step {
    ancestry(head_s);
    x = 1;
    do
    :: x < NSNAP ->
       /* none lost, none duplicated: published xor kept; published = on main's history */
       assert(published[x] != kept[x]);
       assert(published[x] == ((anc & (1 << x)) != 0));
       x++
    :: else -> break
    od;
    /* the follower only ever opened states of main's history */
    assert((fseen & ~anc) == 0);
#ifdef WITNESS_CONFLICT
    /* witness (expected to fail): a branch_conflict with work kept, and a publication after a loss */
    assert(!((kept[1] || kept[2] || kept[3] || kept[4]) && losses == MAXLOSS))
#endif
  }
}
#endif
