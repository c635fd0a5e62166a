from taskdsl.cli import main

raise SystemExit(main())
