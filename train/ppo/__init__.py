"""The steps of the PPO self-play trainer, one module each; :mod:`train.ppo_selfplay` holds the loop that calls
them, in this order:

* :mod:`~train.ppo.options`: the options, one typed field per flag and YAML key;
* :mod:`~train.ppo.args`: what every option allows; a command line or a YAML file (with
  its chain of ``base:`` files) read into checked options;
* :mod:`~train.ppo.setup`: a new or resumed run: its directory, engine, network, optimizer, opponents, storage;
* :mod:`~train.ppo.seeds`: the generators of an update, each a function of (seed, update);
* :mod:`~train.ppo.imitation`: an update of behaviour cloning (before self-play, when asked for);
* :mod:`~train.ppo.rollout`: a rollout of fresh sessions, each played until its deal ends (kept in
  :mod:`~train.ppo.storage`);
* :mod:`~train.ppo.advantages`: GAE along each seat's own decisions;
* :mod:`~train.ppo.update`: the clipped PPO update over the learner's decisions;
* :mod:`~train.ppo.opponents`: who plays the other seats: pool snapshots, scripted baselines;
* :mod:`~train.ppo.logs`: TensorBoard scalars and the lines printed per update (:mod:`~train.ppo.phases`: the
  learner's action rates per decision phase);
* :mod:`~train.ppo.checkpoint`: checkpoints written atomically and read back with every file checked;
* :mod:`~train.ppo.evaluation`: duplicate evaluation during and after training;
* :mod:`~train.ppo.interrupt`: Ctrl-C finishes the update, writes a checkpoint and says how to resume;
* :mod:`~train.ppo.distributed`: data parallelism on torch.distributed: the ranks of a run, their shared steps,
  the local launcher of ``--nproc``;
* :mod:`~train.ppo.cluster`: Ray Train as the launcher on a Ray cluster (``--ray-address``);
* :mod:`~train.ppo.profile`: where an update's time goes (``--profile``).
"""

PROG = "mauscheln train"
"""The command's name in its messages."""
