from taskdsl.cli.main import main

raise SystemExit(main())
