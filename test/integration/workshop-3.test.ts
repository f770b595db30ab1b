import { describeWorkshopPart } from './workshop-checks.js';

// docs/WORKSHOP.md part 3 (workshop-run.ts's WORKSHOP_PARTS), in the shard with the files that read its documents.
describeWorkshopPart(3);
